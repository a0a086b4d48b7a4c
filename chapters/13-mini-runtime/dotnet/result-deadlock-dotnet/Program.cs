// result-deadlock-dotnet: the .Result deadlock, on a SynchronizationContext
// with one thread (what a UI thread, or classic ASP.NET's request context,
// gives you), and the two ways out.
//
// `await` captures SynchronizationContext.Current and posts the rest of the
// method back to it. If the thread that owns that context is blocked in
// .Result (or .Wait()) on the same task, the posted continuation waits in its
// queue behind the very call that waits for it. Three runs of the same
// "button click" on a one-thread context:
//
//   1. .Result on a method whose await captures the context: no result after
//      2 s (the program waits 2 s, not forever, to say so), and the
//      continuation runs only once the handler gives the thread back;
//   2. the same with ConfigureAwait(false) in the method: the continuation
//      runs on the thread pool, and .Result returns;
//   3. the handler awaits instead of blocking: no thread is held at all.
//
// A console program has no SynchronizationContext: there .Result "only"
// blocks a thread (thread-pool starvation, chapter 10), which is why the
// same code can pass in a test and hang in a desktop program.
//
//   make -C chapters/13-mini-runtime
//   build/chapters/13-mini-runtime/result-deadlock-dotnet

using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

/// <summary>Runs posted callbacks one at a time on the thread that calls Run().</summary>
sealed class OneThreadContext : SynchronizationContext
{
    readonly BlockingCollection<(SendOrPostCallback Callback, object? State)> _queue = new();

    public override void Post(SendOrPostCallback d, object? state) => _queue.Add((d, state));

    public override void Send(SendOrPostCallback d, object? state) =>
        throw new NotSupportedException("Send would block; this demo only posts");

    public void Complete() => _queue.CompleteAdding();

    public void Run()
    {
        SetSynchronizationContext(this);
        foreach (var (callback, state) in _queue.GetConsumingEnumerable())
            callback(state);
    }
}

static class ResultDeadlock
{
    static async Task<int> LoadAsync(bool configureAwaitFalse)
    {
        // the I/O a real method would await
        await Task.Delay(100).ConfigureAwait(!configureAwaitFalse);
        return 42;
    }

    static readonly Stopwatch Clock = Stopwatch.StartNew();

    static void Say(string what) =>
        Console.WriteLine($"  [{Clock.ElapsedMilliseconds,5} ms, thread {Environment.CurrentManagedThreadId}] {what}");

    /// <summary>Runs CLICK on a fresh one-thread context; returns once its queue is empty.</summary>
    static void OnUiThread(string title, Func<Task> click)
    {
        Console.WriteLine(title);
        var context = new OneThreadContext();
        var ui = new Thread(context.Run) { Name = "ui" };
        context.Post(async _ =>
        {
            try
            {
                await click();
            }
            finally
            {
                context.Complete(); // nothing more will be posted once the click is over
            }
        }, null);
        ui.Start();
        ui.Join();
    }

    static void Main()
    {
        OnUiThread("1. .Result, and the await inside captures the UI thread's context:", () =>
        {
            Task<int> load = LoadAsync(configureAwaitFalse: false);
            Say("blocking in .Result (bounded here by Wait(2 s))");
            bool done = load.Wait(TimeSpan.FromSeconds(2));
            Say(done ? $"got {load.Result}" : $"no result after 2 s: deadlock (the task is {load.Status}; its continuation is queued for this thread)");
            // Once the handler returns, the UI thread runs its queue, and the
            // continuation that was waiting for it completes the task.
            return load.ContinueWith(t => Say($"the handler returned, the UI thread ran the queued continuation: task {t.Status}, result {t.Result}"),
                TaskScheduler.Default);
        });
        OnUiThread("2. .Result, with ConfigureAwait(false) in the awaited method:", () =>
        {
            Task<int> load = LoadAsync(configureAwaitFalse: true);
            Say("blocking in .Result");
            Say($"got {load.Result}: the continuation ran on a pool thread");
            return Task.CompletedTask;
        });
        OnUiThread("3. await all the way: the handler awaits, and blocks nothing:", async () =>
        {
            Say("awaiting LoadAsync()");
            int value = await LoadAsync(configureAwaitFalse: false);
            Say($"got {value}, back on the UI thread, which was free meanwhile");
        });
    }
}
