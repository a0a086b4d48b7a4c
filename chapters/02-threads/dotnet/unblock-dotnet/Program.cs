// unblock-dotnet: what Socket.Dispose does to a thread blocked in a
// synchronous Receive on Linux, the .NET side of echo-threads' shutdown.
//
// A thread blocks in Receive on an accepted connection; 200 ms later the
// main thread disposes that socket. Closing an fd that another thread is
// blocked on would not wake it, so before close() the runtime's
// SafeSocketHandle.TryUnblockSocket() wakes the call: on a TCP socket it
// disconnects abortively (connect() to AF_UNSPEC, a reset the peer sees),
// unless the socket was shut down for sending first, and then it calls
// shutdown(SHUT_RDWR) instead (the peer sees an orderly end). The program
// prints how long the Receive stayed blocked after the Dispose, how it
// ended, and what the peer saw; `strace -f -e trace=connect,shutdown`
// shows the call the runtime made.
//
//   make -C chapters/02-threads             (needs the .NET SDK 8 or newer)
//   build/chapters/02-threads/unblock-dotnet        dispose a connected socket
//   build/chapters/02-threads/unblock-dotnet -s     Shutdown(Send) first, then dispose
//
// Exit status 0 when the Receive returned within 2 s of the Dispose, 1 when
// it did not (the thread is then left blocked), 2 on a bad argument.

using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

static class Unblock
{
    static int Main(string[] args)
    {
        bool shutdownFirst = false;
        foreach (string a in args)
        {
            if (a == "-s")
                shutdownFirst = true;
            else if (a == "-h")
            {
                Console.WriteLine("usage: unblock-dotnet [-s]");
                Console.WriteLine("Disposes a socket while another thread is blocked in Receive on it.");
                Console.WriteLine("  -s   call Shutdown(SocketShutdown.Send) before Dispose");
                return 0;
            }
            else
            {
                Console.Error.WriteLine($"unblock-dotnet: unknown option {a}");
                Console.Error.WriteLine("usage: unblock-dotnet [-s]");
                return 2;
            }
        }

        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        peer.Connect(listener.LocalEndPoint!);
        Socket server = listener.Accept();

        if (shutdownFirst)
            server.Shutdown(SocketShutdown.Send);

        // The blocked thread: a plain synchronous Receive, on a socket never
        // used asynchronously, so a blocking recv() in the kernel.
        var disposedAt = new Stopwatch();
        string outcome = "still blocked";
        var blocked = new Thread(() =>
        {
            var buffer = new byte[16];
            try
            {
                int n = server.Receive(buffer);
                outcome = $"returned {n}";
            }
            catch (SocketException e)
            {
                outcome = $"SocketException ({e.SocketErrorCode})";
            }
            catch (ObjectDisposedException)
            {
                outcome = "ObjectDisposedException";
            }
        }) { IsBackground = true, Name = "blocked" };
        blocked.Start();

        Thread.Sleep(200);
        Console.WriteLine(shutdownFirst
            ? "Receive blocked on a socket shut down for sending; Dispose() from the main thread"
            : "Receive blocked on a connected socket; Dispose() from the main thread");
        disposedAt.Start();
        server.Dispose();
        bool woke = blocked.Join(2000);
        Console.WriteLine(woke
            ? $"the Receive ended {disposedAt.ElapsedMilliseconds} ms after Dispose: {outcome}"
            : "the Receive was still blocked 2 s after Dispose");

        // What the other end of the connection saw.
        peer.ReceiveTimeout = 2000;
        string seen;
        try
        {
            var buffer = new byte[16];
            int n = peer.Receive(buffer);
            seen = n == 0 ? "end of stream (an orderly close: FIN)" : $"{n} bytes";
        }
        catch (SocketException e)
        {
            seen = e.SocketErrorCode == SocketError.ConnectionReset
                ? "ConnectionReset (the connection was reset: RST)"
                : $"SocketException ({e.SocketErrorCode})";
        }
        Console.WriteLine($"the peer's Receive: {seen}");
        return woke ? 0 : 1;
    }
}
