// pool-starve-dotnet: sync-over-async starving the real .NET thread pool,
// watched from inside: ThreadPool.ThreadCount and PendingWorkItemCount
// sampled every 100 ms, the rate at which the pool adds threads, and how long
// a work item queued at each sample waits before it runs (what every other
// part of the process, socket continuations included, waits too).
//
// N requests are queued to the pool at once. Each one needs an operation
// that takes D ms (Task.Delay, a stand-in for I/O) and whose continuation
// must run on a pool thread. Three ways to wait for it:
//
//   -m result  the request blocks in .Result (sync over async). Every pool
//              thread ends up blocked, and the continuations that would
//              unblock them wait in the queue behind the requests: nothing
//              finishes until the pool adds threads. It knows that these
//              threads are blocked on a Task, and adds them quickly.
//   -m sleep   the request blocks in Thread.Sleep(D) instead (a blocking
//              call the pool cannot see, like a synchronous file or database
//              read). Requests keep finishing, so the pool sees progress and
//              adds a thread now and then at most: the queue drains one
//              request per thread every D ms.
//   -m await   the request awaits: no thread is held while it waits, the
//              pool stays at its minimum, and all finish in about D ms.
//
// Chapter 10's pool-starve and sync-over-async show the same in C, with the
// threads counted by hand.
//
//   make -C chapters/10-threadpool
//   build/chapters/10-threadpool/pool-starve-dotnet -m result
//   build/chapters/10-threadpool/pool-starve-dotnet -m await

using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

static class PoolStarve
{
    static async Task<int> OperationAsync(int ms)
    {
        await Task.Delay(ms); // the continuation needs a pool thread
        return 1;
    }

    static int Usage(string why)
    {
        Console.Error.Write($"pool-starve-dotnet: {why}\nusage: pool-starve-dotnet [-m result|sleep|await] [-n REQUESTS] [-d MS]\n");
        return 2;
    }

    static int Main(string[] args)
    {
        string mode = "result";
        int requests = 32, delayMs = 100;
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            if (i + 1 >= args.Length)
                return Usage($"{a} needs a value");
            string v = args[++i];
            if (a == "-m" && v is "result" or "sleep" or "await")
                mode = v;
            else if (a == "-n" && int.TryParse(v, out int n) && n is >= 1 and <= 10000)
                requests = n;
            else if (a == "-d" && int.TryParse(v, out int d) && d is >= 1 and <= 10000)
                delayMs = d;
            else
                return Usage($"bad argument {a} {v}");
        }

        ThreadPool.GetMinThreads(out int minWorkers, out _);
        Console.WriteLine($"{Environment.ProcessorCount} CPUs, pool minimum {minWorkers} threads; " +
            $"{requests} requests at once, each waiting {delayMs} ms by {mode}");

        int done = 0;
        var clock = Stopwatch.StartNew();
        for (int r = 0; r < requests; r++)
        {
            ThreadPool.QueueUserWorkItem(async _ =>
            {
                if (mode == "result")
                    OperationAsync(delayMs).Result.ToString(); // blocks this pool thread
                else if (mode == "sleep")
                    Thread.Sleep(delayMs);
                else
                    await OperationAsync(delayMs);
                Interlocked.Increment(ref done);
            });
        }

        int firstThreads = ThreadPool.ThreadCount, mostThreads = firstThreads;
        long lastMs = 0, probeWaitMs = -1, probeQueuedMs = 0;
        while (Volatile.Read(ref done) < requests && clock.ElapsedMilliseconds < 30_000)
        {
            // a probe: a work item that only notes how long it waited to run
            probeQueuedMs = clock.ElapsedMilliseconds;
            Volatile.Write(ref probeWaitMs, -1);
            long queuedAt = probeQueuedMs;
            ThreadPool.QueueUserWorkItem(_ => Volatile.Write(ref probeWaitMs, clock.ElapsedMilliseconds - queuedAt));
            Thread.Sleep(100);
            int threads = ThreadPool.ThreadCount;
            mostThreads = Math.Max(mostThreads, threads);
            lastMs = clock.ElapsedMilliseconds;
            long wait = Volatile.Read(ref probeWaitMs);
            string probe = wait >= 0 ? $"ran after {wait} ms" : $"still queued after {lastMs - probeQueuedMs} ms";
            Console.WriteLine($"  {lastMs,6} ms  threads {threads,3}  pending {ThreadPool.PendingWorkItemCount,4}  done {Volatile.Read(ref done),4}/{requests}  probe {probe}");
        }
        long totalMs = clock.ElapsedMilliseconds;
        if (done < requests)
        {
            Console.WriteLine($"gave up after {totalMs} ms: {done} of {requests} done");
            return 1;
        }
        double added = mostThreads - firstThreads;
        Console.WriteLine($"all {requests} done in {totalMs} ms; pool threads {firstThreads} -> {mostThreads}: " +
            $"{added:0} added, {(lastMs > 0 ? added * 1000 / lastMs : 0):0.0} a second");
        return 0;
    }
}
