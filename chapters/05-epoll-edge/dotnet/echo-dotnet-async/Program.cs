// echo-dotnet-async: the echo server a C# developer writes, for this chapter's
// edge-triggered epoll underneath it.
//
// One task per client, await Socket.ReceiveAsync / SendAsync, and a
// CancellationToken that SIGINT and SIGTERM cancel. On Linux every await that
// cannot finish at once parks its operation in .NET's SocketAsyncEngine: one
// thread in epoll_wait() on sockets registered EPOLLIN | EPOLLOUT | EPOLLET,
// which hands the events to the thread pool (the chapter's ".NET connection").
// `strace -f` on this server shows that registration and what each message costs.
//
//   make -C chapters/05-epoll-edge          (needs the .NET SDK 8 or newer)
//   build/chapters/05-epoll-edge/echo-dotnet-async -p 7000
//   build/common/tools/echo-client -p 7000 hello
//
// The same contract as the C servers: -b ADDR (default 127.0.0.1), -p PORT
// (0: any free port), "listening on ADDR:PORT" first on stdout, exit 0 on
// SIGINT or SIGTERM, exit 2 on bad arguments.

using System;
using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Course;

static class EchoAsync
{
    const int BufferSize = 16 * 1024;

    // Echo until the client half-closes, then close. Every byte received is
    // sent before the next receive, so EOF means everything is echoed; and a
    // client that never reads stops us at the SendAsync (backpressure), not in
    // a buffer that grows.
    static async Task ServeAsync(Socket client, CancellationToken stop)
    {
        // An async method runs synchronously up to its first await that is not
        // yet complete. Without this, a client whose bytes are already waiting
        // would be served on the accept loop's turn, and the next accept would
        // wait for it.
        await Task.Yield();
        var buffer = new byte[BufferSize];
        try
        {
            while (true)
            {
                int n = await client.ReceiveAsync(buffer, SocketFlags.None, stop);
                if (n == 0)
                    break;
                // SendAsync on a stream socket completes once every byte is
                // handed to the kernel; the loop only makes that explicit.
                for (int sent = 0; sent < n;)
                    sent += await client.SendAsync(buffer.AsMemory(sent, n - sent), SocketFlags.None, stop);
            }
        }
        catch (OperationCanceledException)
        {
            // the server is stopping
        }
        catch (SocketException)
        {
            // reset by the client, or any other end of the connection
        }
        finally
        {
            client.Dispose();
        }
    }

    static async Task<int> Main(string[] args)
    {
        var cli = ServerCli.Parse(args, "echo-dotnet-async",
            "An echo server in C#: async/await on Socket, one task per client.");
        using var stop = new CancellationTokenSource();
        using var signals = ServerCli.StopOnSignals(stop);
        var clients = new ConcurrentDictionary<long, Task>();
        long nextId = 0;

        using (Socket listener = cli.Listen())
        {
            // A free slot before each accept: at the limit, clients wait in
            // the backlog (ServerCli.MaxClients says why .NET must stop early).
            int maxClients = ServerCli.MaxClients();
            var slots = new SemaphoreSlim(maxClients);
            bool told = false;
            while (!stop.IsCancellationRequested)
            {
                Socket client;
                try
                {
                    if (!slots.Wait(0))
                    {
                        if (!told)
                            Console.Error.WriteLine($"echo-dotnet-async: {maxClients} client{(maxClients == 1 ? "" : "s")}, as many as the limit on open files leaves room for: the next ones wait");
                        told = true;
                        await slots.WaitAsync(stop.Token);
                    }
                    client = await listener.AcceptAsync(stop.Token);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
                catch (SocketException)
                {
                    // A client that left before we accepted it, or EMFILE, should
                    // the limit be lowered under us: wait a little, never spin.
                    slots.Release();
                    try
                    {
                        await Task.Delay(10, stop.Token);
                    }
                    catch (OperationCanceledException)
                    {
                        break;
                    }
                    continue;
                }
                long id = nextId++;
                Task served = ServeAsync(client, stop.Token);
                clients[id] = served;
                _ = served.ContinueWith(_ =>
                {
                    clients.TryRemove(id, out Task? _);
                    slots.Release();
                }, TaskScheduler.Default);
            }
            // Every client's receive or send was cancelled with the token; each
            // task closes its socket and ends.
            await Task.WhenAll(clients.Values);
        }
        return 0;
    }
}
