// saea-recursion: why echo-dotnet-saea handles "completed at once" in a loop.
//
// Socket.ReceiveAsync(SocketAsyncEventArgs) returns false when the receive
// finished at once, and then raises no Completed event: the caller handles
// the result. On Linux that happens whenever bytes are already waiting, since
// the runtime tries recv() before it parks the operation in its epoll loop. The
// common way to write it,
//
//     void StartReceive(e) { if (!socket.ReceiveAsync(e)) OnReceived(e); }
//     void OnReceived(e)   { ...use the bytes...; StartReceive(e); }
//
// nests one call deeper for every receive that finishes at once, and a
// client that keeps bytes waiting keeps it going: a thread's stack is a few
// hundred KiB to 8 MiB, and a stack overflow ends a .NET process at once (no
// catch can stop it).
//
// This program queues BYTES bytes on a loopback connection, then receives
// them CHUNK bytes at a time on a thread with a STACK KiB stack, with the
// handler written as above (-r) or as a loop (the default):
//
//     void Pump(e) { while (!socket.ReceiveAsync(e)) if (!OnReceived(e)) return; }
//
// and prints how many receives finished at once and how deep the handler
// calls went, with the stack they used.
//
//   make -C chapters/05-epoll-edge
//   build/chapters/05-epoll-edge/saea-recursion              (loop: 1 call deep)
//   build/chapters/05-epoll-edge/saea-recursion -r -n 1000   (1,001 calls deep)
//   build/chapters/05-epoll-edge/saea-recursion -r           (Stack overflow., SIGABRT)

using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;

static unsafe class SaeaRecursion
{
    static bool s_recursive;
    static Socket s_reader = null!;
    static int s_depth, s_maxDepth;
    static long s_stackTop, s_stackDeepest; // addresses of a local, outermost and deepest
    static long s_received, s_atOnce, s_pending;
    static readonly ManualResetEventSlim s_done = new();

    /// <summary>Handles one receive; false at EOF.</summary>
    static bool OnReceived(SocketAsyncEventArgs e)
    {
        byte here;
        long address = (long)&here;
        if (++s_depth > s_maxDepth)
        {
            s_maxDepth = s_depth;
            s_stackDeepest = address;
        }
        if (s_depth == 1)
            s_stackTop = address;
        bool more = e.SocketError == SocketError.Success && e.BytesTransferred > 0;
        s_received += e.BytesTransferred;
        if (!more)
            s_done.Set();
        else if (s_recursive)
            StartReceive(e); // the receive after this one, one call deeper
        s_depth--;
        return more;
    }

    // -r: the handler starts the next receive, and handles it itself when it
    // finished at once.
    static void StartReceive(SocketAsyncEventArgs e)
    {
        if (s_reader.ReceiveAsync(e))
        {
            s_pending++;
            return; // Completed comes later, on a pool thread, with a fresh stack
        }
        s_atOnce++;
        OnReceived(e);
    }

    // the loop: a receive that finished at once is handled on the next turn
    static void Pump(SocketAsyncEventArgs e)
    {
        while (true)
        {
            if (s_reader.ReceiveAsync(e))
            {
                s_pending++;
                return;
            }
            s_atOnce++;
            if (!OnReceived(e))
                return;
        }
    }

    static int Usage(string why)
    {
        Console.Error.Write($"saea-recursion: {why}\nusage: saea-recursion [-r] [-n BYTES] [-c CHUNK] [-k STACK_KIB]\n" +
            "  -r            handle a receive that finished at once by recursion (the default: a loop)\n" +
            "  -n BYTES      bytes queued before the first receive (default 65536)\n" +
            "  -c CHUNK      bytes per receive (default 1)\n" +
            "  -k STACK_KIB  the receiving thread's stack (default 1024)\n");
        return 2;
    }

    static int Main(string[] args)
    {
        int bytes = 65536, chunk = 1, stackKib = 1024;
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            if (a == "-r")
            {
                s_recursive = true;
                continue;
            }
            if (a is not ("-n" or "-c" or "-k"))
                return Usage(a == "-h" ? "what finishing at once does to a recursive handler" : $"unknown argument '{a}'");
            if (i + 1 >= args.Length || !int.TryParse(args[++i], out int v) || v < 1)
                return Usage($"{a} needs a number of 1 or more");
            if (a == "-n")
                bytes = v;
            else if (a == "-c")
                chunk = v;
            else
                stackKib = v;
        }

        // A loopback connection whose receive queue holds the bytes before
        // the first receive: every receive can then finish at once.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        using var writer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        writer.Connect(listener.LocalEndPoint!);
        s_reader = listener.Accept();
        var sending = new Thread(() =>
        {
            writer.Send(new byte[bytes]);
            writer.Shutdown(SocketShutdown.Send);
        });
        sending.Start();
        int queued = -1;
        for (int tries = 0; tries < 100 && s_reader.Available != queued; tries++)
        {
            queued = s_reader.Available;
            if (queued < bytes)
                Thread.Sleep(20);
        }
        Console.WriteLine($"{queued} bytes queued, received {chunk} at a time on a thread with a {stackKib} KiB stack, " +
            $"a receive that finished at once handled by {(s_recursive ? "recursion" : "a loop")}");

        var e = new SocketAsyncEventArgs();
        e.SetBuffer(new byte[chunk], 0, chunk);
        e.Completed += (_, args) =>
        {
            if (OnReceived(args) && !s_recursive)
                Pump(args);
        };
        var receiving = new Thread(() =>
        {
            if (s_recursive)
                StartReceive(e);
            else
                Pump(e);
        }, stackKib * 1024);
        receiving.Start();
        receiving.Join();
        if (!s_done.Wait(TimeSpan.FromSeconds(30)))
        {
            Console.Error.WriteLine($"saea-recursion: no EOF after 30 s ({s_received} of {bytes} bytes)");
            return 1;
        }
        sending.Join();
        long stackUsed = s_stackTop - s_stackDeepest;
        Console.WriteLine($"received {s_received} bytes: {s_atOnce} receives finished at once, {s_pending} pending");
        Console.WriteLine($"deepest nesting: {s_maxDepth} handler call{(s_maxDepth == 1 ? "" : "s")}, {stackUsed / 1024} KiB of stack" +
            (s_maxDepth > 1 ? $" ({stackUsed / (s_maxDepth - 1)} bytes a call)" : ""));
        return 0;
    }
}
