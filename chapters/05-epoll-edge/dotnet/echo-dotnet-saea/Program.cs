// echo-dotnet-saea: the echo server on SocketAsyncEventArgs, the callback API
// under .NET's sockets, written so that it cannot overflow its stack.
//
// Socket.ReceiveAsync(SocketAsyncEventArgs) and SendAsync return true when the
// operation is pending (the Completed event will be raised later, on a pool
// thread) and false when it finished at once, in which case no event comes and
// the caller must handle the result itself. On Linux a receive finishes at once
// whenever bytes are already waiting: the runtime tries recv() first and parks
// the operation in its epoll loop only on EAGAIN (the chapter's ".NET
// connection"). The usual sample handles `false` by calling the completion
// handler, which starts the next operation, which may finish at once too: a
// call deeper for every message, for as long as the client keeps data waiting.
// Here Drive() is a loop: an operation that finished at once is handled on
// the next turn of the same loop, and only a pending one returns. saea-recursion,
// beside this program, shows the recursive version running out of stack.
//
//   make -C chapters/05-epoll-edge          (needs the .NET SDK 8 or newer)
//   build/chapters/05-epoll-edge/echo-dotnet-saea -p 7000
//
// One SocketAsyncEventArgs and one buffer per client, used for its receive
// and its send in turn: receive, send all of it (a short send continues from
// where it stopped), receive again. The same contract as the C servers: -b,
// -p, "listening on ADDR:PORT", exit 0 on SIGINT or SIGTERM, 2 on bad
// arguments. On exit it prints how the operations finished: "completed at
// once N, pending N".

using System;
using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Course;

sealed class Client
{
    public readonly Socket Socket;
    public readonly SocketAsyncEventArgs Args = new();
    public int Filled;  // bytes of the buffer the last receive filled, being sent back
    int _closed;

    public Client(Socket socket, int bufferSize)
    {
        Socket = socket;
        Args.SetBuffer(new byte[bufferSize], 0, bufferSize);
        Args.UserToken = this;
    }

    /// <summary>True for the one caller that gets to close it.</summary>
    public bool MarkClosed() => Interlocked.Exchange(ref _closed, 1) == 0;
}

sealed class SaeaServer
{
    const int BufferSize = 16 * 1024;

    readonly Socket _listener;
    readonly SocketAsyncEventArgs _acceptArgs = new();
    readonly ConcurrentDictionary<Client, byte> _clients = new();
    readonly SemaphoreSlim _slots;   // ServerCli.MaxClients: stop before the fd limit
    readonly int _maxClients;
    readonly CountdownEvent _live = new(1);  // 1 for the accept loop, +1 per client
    volatile bool _stopping;
    int _acceptingDone;
    Timer? _retry;   // held here: a Timer nobody references may be collected before it fires
    bool _toldFull;
    long _atOnce, _pending;

    public SaeaServer(Socket listener, int maxClients)
    {
        _listener = listener;
        _maxClients = maxClients;
        _slots = new SemaphoreSlim(maxClients);
        _acceptArgs.Completed += (_, e) =>
        {
            Interlocked.Increment(ref _pending);
            if (OnAccepted(e))
                AcceptLoop();
        };
    }

    public string Counts => $"completed at once {Interlocked.Read(ref _atOnce)}, pending {Interlocked.Read(ref _pending)}";

    // ---- accepting --------------------------------------------------------------

    /// <summary>
    /// Accepts until an accept is pending (its Completed event comes back
    /// here), the server is full (the next client to leave comes back here) or
    /// it stops. A slot is taken before each accept and is the new client's.
    /// </summary>
    public void AcceptLoop()
    {
        while (!_stopping)
        {
            if (!_slots.Wait(0))
            {
                if (!_toldFull)
                    Console.Error.WriteLine($"echo-dotnet-saea: {_maxClients} client{(_maxClients == 1 ? "" : "s")}, as many as the limit on open files leaves room for: the next ones wait");
                _toldFull = true;
                _slots.WaitAsync().ContinueWith(_ =>
                {
                    _slots.Release();
                    AcceptLoop();
                }, TaskScheduler.Default);
                return;
            }
            _acceptArgs.AcceptSocket = null;
            bool pending;
            try
            {
                pending = _listener.AcceptAsync(_acceptArgs);
            }
            catch (ObjectDisposedException)
            {
                break; // Stop() closed the listener
            }
            if (pending)
                return;
            Interlocked.Increment(ref _atOnce);
            if (!OnAccepted(_acceptArgs))
                return;
        }
        AcceptingDone();
    }

    /// <summary>Handles one accept; false when the loop must not go on now.</summary>
    bool OnAccepted(SocketAsyncEventArgs e)
    {
        if (e.SocketError != SocketError.Success)
        {
            _slots.Release();
            if (_stopping)
            {
                AcceptingDone();
                return false;
            }
            // EMFILE and the like: the client is still in the backlog, and the
            // next accept would fail at once. Try again in a moment, not now.
            _retry = new Timer(_ => AcceptLoop(), null, 100, Timeout.Infinite);
            return false;
        }
        var client = new Client(e.AcceptSocket!, BufferSize);
        client.Args.Completed += (_, args) =>
        {
            Interlocked.Increment(ref _pending);
            Drive((Client)args.UserToken!);
        };
        _live.AddCount();
        _clients[client] = 0;
        if (_stopping)
        {
            Close(client); // accepted while stopping: Stop() may have missed it
            AcceptingDone();
            return false;
        }
        StartReceive(client);
        return true;
    }

    void AcceptingDone()
    {
        if (Interlocked.Exchange(ref _acceptingDone, 1) == 0)
            _live.Signal();
    }

    // ---- one client -------------------------------------------------------------

    void StartReceive(Client c)
    {
        var e = c.Args;
        e.SetBuffer(0, e.Buffer!.Length);
        bool pending;
        try
        {
            pending = c.Socket.ReceiveAsync(e);
        }
        catch (ObjectDisposedException)
        {
            Close(c);
            return;
        }
        if (!pending)
        {
            Interlocked.Increment(ref _atOnce);
            Drive(c);
        }
    }

    /// <summary>
    /// Handles the operation that just finished and starts the next one, for as
    /// long as they keep finishing at once. Called from the Completed event (a
    /// pool thread) or by whoever started an operation that returned false; the
    /// stack stays one Drive() deep however many operations finish at once.
    /// </summary>
    void Drive(Client c)
    {
        var e = c.Args;
        while (true)
        {
            if (e.SocketError != SocketError.Success)
            {
                Close(c); // reset, or closed by Stop(): OperationAborted
                return;
            }
            bool pending;
            try
            {
                if (e.LastOperation == SocketAsyncOperation.Receive)
                {
                    if (e.BytesTransferred == 0)
                    {
                        Close(c); // half-closed, and every byte before it was echoed
                        return;
                    }
                    c.Filled = e.BytesTransferred;
                    e.SetBuffer(0, c.Filled);
                    pending = c.Socket.SendAsync(e);
                }
                else
                {
                    int sent = e.Offset + e.BytesTransferred;
                    if (sent < c.Filled)
                    {
                        e.SetBuffer(sent, c.Filled - sent); // a short send: the rest
                        pending = c.Socket.SendAsync(e);
                    }
                    else
                    {
                        e.SetBuffer(0, e.Buffer!.Length);
                        pending = c.Socket.ReceiveAsync(e);
                    }
                }
            }
            catch (ObjectDisposedException)
            {
                Close(c);
                return;
            }
            if (pending)
                return; // the Completed event calls Drive() again
            Interlocked.Increment(ref _atOnce);
        }
    }

    void Close(Client c)
    {
        if (!c.MarkClosed())
            return;
        _clients.TryRemove(c, out _);
        c.Socket.Dispose();
        c.Args.Dispose();
        _slots.Release();
        _live.Signal();
    }

    // ---- stopping ---------------------------------------------------------------

    /// <summary>
    /// Closes the listener and every client socket: each pending operation
    /// completes with OperationAborted and its Drive() closes the rest. Returns
    /// once every client is closed (or after WAIT).
    /// </summary>
    public bool Stop(TimeSpan wait)
    {
        _stopping = true;
        _listener.Dispose();
        foreach (var c in _clients.Keys)
            c.Socket.Dispose();
        return _live.Wait(wait);
    }
}

static class EchoSaea
{
    static int Main(string[] args)
    {
        var cli = ServerCli.Parse(args, "echo-dotnet-saea",
            "An echo server in C# on SocketAsyncEventArgs: completions handled in a loop, not by recursion.");
        using var stop = new CancellationTokenSource();
        using var signals = ServerCli.StopOnSignals(stop);
        var server = new SaeaServer(cli.Listen(), ServerCli.MaxClients());
        server.AcceptLoop();
        stop.Token.WaitHandle.WaitOne();
        bool clean = server.Stop(TimeSpan.FromSeconds(2));
        Console.Out.Write($"{server.Counts}\n");
        if (!clean)
            Console.Error.WriteLine("echo-dotnet-saea: some clients were still closing after 2 s");
        return 0;
    }
}
