// async-void-dotnet: where the exception of an async method goes when nobody
// awaits it. Two cases, one per run, with the process's exit status as the
// verdict:
//
//   async-void-dotnet void   an `async void` method throws after its first
//                            await. Its builder (AsyncVoidMethodBuilder) has no
//                            Task to store the exception in: it rethrows it on
//                            the SynchronizationContext it started on or, with
//                            none (a console program), on a thread-pool thread,
//                            where nothing can catch it. The process dies:
//                            "Unhandled exception." and SIGABRT (status 134),
//                            although the call sits inside a try/catch.
//   async-void-dotnet task   the same method returning Task, called and never
//                            awaited. The exception is stored in the Task, and
//                            the program goes on. Once the Task is unreachable
//                            and the GC finalizes it, the exception is reported
//                            to TaskScheduler.UnobservedTaskException, which
//                            this program subscribes to, and is then ignored:
//                            exit 0.
//   async-void-dotnet dropped  the same, with nobody subscribed to the event,
//                            the default: the finalizer raises it for no one,
//                            and the exception is gone. Nothing is printed,
//                            the process does not crash: exit 0.
//
// The C runtime of this chapter has the same choice to make for a task that
// nobody awaits (rt/task.c); this is what .NET chose.
//
//   make -C chapters/13-mini-runtime
//   build/chapters/13-mini-runtime/async-void-dotnet void; echo $?
//   build/chapters/13-mini-runtime/async-void-dotnet task; echo $?
//   build/chapters/13-mini-runtime/async-void-dotnet dropped; echo $?

using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

static class AsyncVoid
{
    static async void FailLaterVoid()
    {
        await Task.Delay(50); // the rest runs later, on a pool thread
        throw new InvalidOperationException("thrown after an await in an async void method");
    }

    static async Task FailLaterTask()
    {
        await Task.Delay(50);
        throw new InvalidOperationException("thrown after an await in an async Task method nobody awaits");
    }

    // Not inlined, so that no local of Main keeps the Task alive for the GC:
    // Main only gets a weak reference, to know when it has failed.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static WeakReference<Task> StartAndForget() => new(FailLaterTask());

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool HasFailed(WeakReference<Task> task) => task.TryGetTarget(out Task? t) && t.IsFaulted;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool IsAlive(WeakReference<Task> task) => task.TryGetTarget(out _);

    static int Main(string[] args)
    {
        string mode = args.Length == 1 ? args[0] : "";
        if (mode == "void")
        {
            try
            {
                FailLaterVoid();
                Console.WriteLine("FailLaterVoid() returned at its first await; the try/catch around it is already behind us");
            }
            catch (Exception e)
            {
                Console.WriteLine($"caught: {e.Message}"); // never printed
            }
            Thread.Sleep(2000); // the exception ends the process before this does
            Console.WriteLine("still running after 2 s"); // never printed
            return 0;
        }
        if (mode == "task")
        {
            int reported = 0;
            TaskScheduler.UnobservedTaskException += (_, e) =>
            {
                Console.WriteLine($"UnobservedTaskException: {e.Exception.InnerException?.Message}");
                Interlocked.Increment(ref reported);
            };
            var task = StartAndForget();
            Console.WriteLine("FailLaterTask() returned a Task, which nobody awaits");
            while (!HasFailed(task))
                Thread.Sleep(10);
            Console.WriteLine($"it has failed, silently: {reported} reported; now a full GC and the finalizers");
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Console.WriteLine($"the process goes on: {reported} unobserved exception(s) reported, exit 0");
            return 0;
        }
        if (mode == "dropped")
        {
            // no handler for TaskScheduler.UnobservedTaskException: the default
            var task = StartAndForget();
            Console.WriteLine("FailLaterTask() returned a Task, which nobody awaits; nobody handles UnobservedTaskException");
            while (!HasFailed(task))
                Thread.Sleep(10);
            Console.WriteLine("it has failed, silently; now a full GC and the finalizers");
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            Console.WriteLine(IsAlive(task)
                ? "the Task is still alive"
                : "the Task is collected and the finalizers have run: its exception is dropped, nothing reported, exit 0");
            return 0;
        }
        Console.Error.WriteLine("usage: async-void-dotnet void|task|dropped");
        return 2;
    }
}
