// channel-dotnet: the readers that wait in a Channel<T>, the .NET side of
// mini-redis's blocked clients (blocked.c), and the BLPOP timeout written the
// two ways C# writes it. One run, three parts, one fact a line:
//
//   a. three readers await ReadAsync() on an empty unbounded channel, in the
//      order A, B, C, then three writes: each item goes to the reader that has
//      waited longest, and straight to it: the channel's Count stays 0.
//   b. a reader whose token is cancelled while it waits ends cancelled (the
//      exception's real type is printed), and the next write skips it for the
//      next reader: nothing is lost. With no reader left, an item stays in the
//      channel (Count 1), and a token cancelled before the call beats it.
//   c. the BLPOP timeout: ReadAsync under a linked CancellationTokenSource with
//      CancelAfter(100), nothing written (ten times, to see the spread); then
//      Task.WhenAny(tcs.Task, Task.Delay(100, token)), once with nobody
//      completing the TaskCompletionSource, once with another task doing it
//      first.
//
// The lines are the same on every run but for the times, which
// tests/15-mini-redis/dotnet.bats checks within a range. .NET's timers are
// due by Environment.TickCount64 (the program finds it in the runtime), a
// millisecond count that moves in steps of the kernel's tick, 4 ms on the
// machine the chapter was written on: by that count a timeout never ends
// early; by Stopwatch it can end up to one step before its 100 ms. The C
// runtime adds 1 ms to a blocked pop's deadline for a reason of the same kind.
//
//   make -C chapters/15-mini-redis
//   build/chapters/15-mini-redis/channel-dotnet

using System;
using System.Diagnostics;
using System.Reflection;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

static class ChannelDemo
{
    const int TimeoutMs = 100; // BLPOP key 0.1

    // One reader: a single ReadAsync, awaited. What it got, or the type of
    // the exception its await threw.
    static async Task<string> Read(ChannelReader<string> reader, CancellationToken token = default)
    {
        try
        {
            return await reader.ReadAsync(token);
        }
        catch (OperationCanceledException e)
        {
            return e.GetType().FullName!;
        }
    }

    static void Write(Channel<string> channel, string item, string after)
    {
        bool written = channel.Writer.TryWrite(item);
        Console.WriteLine($"  write \"{item}\": TryWrite {written}, Reader.Count {channel.Reader.Count}{after}");
    }

    // How far Environment.TickCount64 moves at once: the smallest of 50 moves
    // in a row, watched in a busy loop. A move seen late (the loop was
    // descheduled: a busy machine) is only ever larger.
    static long TickStep()
    {
        long step = long.MaxValue, last = Environment.TickCount64;
        var sw = Stopwatch.StartNew();
        for (int moves = 0; moves < 50 && sw.ElapsedMilliseconds < 2000;)
        {
            long now = Environment.TickCount64;
            if (now == last)
                continue;
            if (moves++ > 0) // the first move may follow a partial wait
                step = Math.Min(step, now - last);
            last = now;
        }
        return step;
    }

    // What TimerQueue.TickCount64 reads: the clock every .NET timer is due
    // by (TimerQueue is internal to System.Private.CoreLib). Found by
    // reflection in the installed runtime: the first call instruction (0x28)
    // in the IL of the property's getter.
    static string TimerClock()
    {
        Type? queue = typeof(Timer).Assembly.GetType("System.Threading.TimerQueue");
        const BindingFlags any = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static;
        MethodInfo? get = queue?.GetProperty("TickCount64", any)?.GetMethod;
        byte[]? il = get?.GetMethodBody()?.GetILAsByteArray();
        for (int i = 0; il != null && i + 4 < il.Length; i++)
        {
            if (il[i] != 0x28)
                continue;
            try
            {
                MethodBase? m = get!.Module.ResolveMethod(BitConverter.ToInt32(il, i + 1));
                if (m != null)
                    return $"{m.DeclaringType}.{m.Name}";
            }
            catch (ArgumentException)
            {
                // a 0x28 inside an operand: not a call
            }
        }
        return "(not found)";
    }

    static async Task FirstComeFirstServed()
    {
        Console.WriteLine("a. three readers wait on an empty unbounded channel, in the order A, B, C");
        var channel = Channel.CreateUnbounded<string>();
        // Each Read runs until its await: A is queued before B, B before C.
        Task<string> a = Read(channel.Reader), b = Read(channel.Reader), c = Read(channel.Reader);
        Console.WriteLine($"  Reader.Count {channel.Reader.Count}; A, B, C done: {a.IsCompleted}, {b.IsCompleted}, {c.IsCompleted}");
        foreach (string item in new[] { "x", "y", "z" })
            Write(channel, item, ": handed to a waiting reader, never in the channel");
        Console.WriteLine($"  A got {await a}, B got {await b}, C got {await c}: first come, first served");
    }

    static async Task CancelledReader()
    {
        Console.WriteLine("b. reader 1 waits with a token, then reader 2 without; reader 1's token is cancelled");
        var channel = Channel.CreateUnbounded<string>();
        using var gone = new CancellationTokenSource();
        Task<string> r1 = Read(channel.Reader, gone.Token), r2 = Read(channel.Reader);
        gone.Cancel();
        string what = await r1;
        Console.WriteLine($"  reader 1 ends cancelled: its await threw {what}");
        Write(channel, "p", "");
        Console.WriteLine($"  reader 2 got {await r2}: the write skipped the cancelled reader, nothing lost");
        Write(channel, "q", ": no reader waits, the item stays in the channel");
        Task<string> late = Read(channel.Reader, gone.Token);
        Console.WriteLine($"  ReadAsync with a token cancelled before the call: {await late}, Reader.Count {channel.Reader.Count}");
        Console.WriteLine($"  ReadAsync without: {await Read(channel.Reader)} at once, Reader.Count {channel.Reader.Count}");
    }

    static async Task Timeouts()
    {
        Console.WriteLine($"c. the BLPOP timeout, {TimeoutMs} ms, nothing written");
        var channel = Channel.CreateUnbounded<string>();
        using var clientGone = new CancellationTokenSource(); // cancelled if the client left
        long step = TickStep();
        long tickMin = long.MaxValue, tickMax = 0;
        double swMin = double.MaxValue, swMax = 0;
        for (int i = 0; i < 10; i++)
        {
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(clientGone.Token);
            long t0 = Environment.TickCount64;
            var sw = Stopwatch.StartNew();
            wait.CancelAfter(TimeoutMs);
            string what = await Read(channel.Reader, wait.Token);
            double ms = sw.Elapsed.TotalMilliseconds;
            long ticks = Environment.TickCount64 - t0;
            if (i == 0)
                Console.WriteLine($"  ReadAsync, linked CancellationTokenSource, CancelAfter({TimeoutMs}): {what}; "
                                  + $"clientGone cancelled: {clientGone.IsCancellationRequested}, a timeout");
            tickMin = Math.Min(tickMin, ticks);
            tickMax = Math.Max(tickMax, ticks);
            swMin = Math.Min(swMin, ms);
            swMax = Math.Max(swMax, ms);
        }
        Console.WriteLine($"  the timers' clock, TimerQueue.TickCount64, calls {TimerClock()}");
        Console.WriteLine($"  10 such waits: {tickMin} to {tickMax} ms by Environment.TickCount64, "
                          + $"whose smallest move seen is {step} ms");
        Console.WriteLine($"  and about {swMin:F1} to {swMax:F1} ms by Stopwatch");

        // The same wait as a race: a promise that a writer completes, against a
        // delay. The wait's token stops the delay that lost.
        var tcs = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        using (var waitTok = new CancellationTokenSource())
        {
            var sw = Stopwatch.StartNew();
            Task delay = Task.Delay(TimeoutMs, waitTok.Token);
            Task first = await Task.WhenAny(tcs.Task, delay);
            double ms = sw.Elapsed.TotalMilliseconds;
            Console.WriteLine($"  Task.WhenAny(tcs.Task, Task.Delay({TimeoutMs}, token)), nobody completes the TCS: "
                              + $"{(first == delay ? "the delay" : "the TCS")} wins, after about {ms:F1} ms; tcs.Task {tcs.Task.Status}");
            Console.WriteLine($"  the waiter cancels its TCS: TrySetCanceled {tcs.TrySetCanceled()}; "
                              + $"a writer that comes later: TrySetResult {tcs.TrySetResult("late")}");
        }

        tcs = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        using (var waitTok = new CancellationTokenSource())
        {
            Task delay = Task.Delay(TimeoutMs, waitTok.Token);
            Task<Task> any = Task.WhenAny(tcs.Task, delay);
            Task<bool> writer = Task.Run(() => tcs.TrySetResult("item"));
            Task first = await any;
            Console.WriteLine($"  the same, another task completes the TCS first: "
                              + $"{(first == tcs.Task ? "the TCS" : "the delay")} wins, with \"{tcs.Task.Result}\" "
                              + $"(its TrySetResult {await writer})");
            Console.WriteLine($"  TrySetResult on it afterwards: {tcs.TrySetResult("again")}; "
                              + $"TrySetCanceled: {tcs.TrySetCanceled()}: a TaskCompletionSource completes once");
            TaskStatus before = delay.Status;
            waitTok.Cancel();
            try
            {
                await delay;
            }
            catch (OperationCanceledException)
            {
            }
            Console.WriteLine($"  the delay that lost was {before} until the wait cancelled its token: {delay.Status}");
        }
    }

    static async Task<int> Main(string[] args)
    {
        if (args.Length != 0)
        {
            Console.Error.WriteLine("usage: channel-dotnet");
            return 2;
        }
        await FirstComeFirstServed();
        await CancelledReader();
        await Timeouts();
        return 0;
    }
}
