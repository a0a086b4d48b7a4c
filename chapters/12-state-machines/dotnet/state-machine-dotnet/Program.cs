// state-machine-dotnet: the state machine the C# compiler writes for
// SumPagesAsync (SumPages.cs), looked at with reflection, beside the one
// chapter 12 writes by hand in C (sum-pages-sm.c, struct sum_pages_sm).
//
// 1. The generated type, as compiled with optimisation (a Release build) and
//    without (a Debug build): its fields are the C struct's. <>1__state is
//    `state` (-1 running, 0 and 1 suspended at await #0 and #1, -2 done), the
//    parameters are copied in, the locals that live across an await are
//    hoisted into fields (<i>5__N, <total>5__N), and each kind of awaiter
//    gets a field (<>u__N). Optimised, it is a struct, and `page` and
//    `words`, which no await separates from their use, stay locals;
//    unoptimised, it is a class, and every local is a field (for the debugger).
// 2. One call, stopped at each await: the program hands the method its pages
//    one at a time and reads <>1__state and the hoisted locals in between,
//    from the copy of the struct that the first real suspension moved to the
//    heap (the Task returned is that box).
// 3. A call whose awaits all complete at once: MoveNext runs to the end
//    inside the call, the struct never leaves the stack, and the Task is a
//    plain completed Task<long>.
//
//   make -C chapters/12-state-machines
//   build/chapters/12-state-machines/state-machine-dotnet

using System;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Optimized = Course.Optimized.SumPages;
using Unoptimized = Course.Unoptimized.SumPages;

static class StateMachine
{
    const BindingFlags Instance = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

    /// <summary>A type's name as C# spells it: TaskAwaiter&lt;string&gt;, not TaskAwaiter`1.</summary>
    static string Name(Type t)
    {
        if (t == typeof(int)) return "int";
        if (t == typeof(long)) return "long";
        if (t == typeof(string)) return "string";
        if (!t.IsGenericType) return t.Name;
        return $"{t.Name[..t.Name.IndexOf('`')]}<{string.Join(", ", t.GetGenericArguments().Select(Name))}>";
    }

    static Type StateMachineOf(Type declaring) =>
        declaring.GetMethod(nameof(Optimized.SumPagesAsync))!.GetCustomAttribute<AsyncStateMachineAttribute>()!.StateMachineType;

    static void Describe(string build, Type declaring)
    {
        Type sm = StateMachineOf(declaring);
        string kind = sm.IsValueType ? "struct" : "class";
        Console.WriteLine($"{build}: {kind} {sm.Name} : {string.Join(", ", sm.GetInterfaces().Select(Name))}");
        foreach (FieldInfo f in sm.GetFields(Instance).OrderBy(f => f.MetadataToken))
            Console.WriteLine($"    {Name(f.FieldType),-32} {f.Name}");
    }

    /// <summary>The state machine inside a Task returned by an async method, or null.</summary>
    static object? BoxedStateMachine(Task task) =>
        task.GetType().GetField("StateMachine", Instance)?.GetValue(task);

    static object? FieldStartingWith(object sm, string prefix) =>
        sm.GetType().GetFields(Instance).First(f => f.Name.StartsWith(prefix, StringComparison.Ordinal)).GetValue(sm);

    static int StateOf(Task task) => (int)FieldStartingWith(BoxedStateMachine(task)!, "<>1__state")!;

    static void Show(string when, Task task)
    {
        object sm = BoxedStateMachine(task)!;
        Console.WriteLine($"  {when,-34} <>1__state {FieldStartingWith(sm, "<>1__state"),2}   i {FieldStartingWith(sm, "<i>5__")}   total {FieldStartingWith(sm, "<total>5__")}");
    }

    static void WaitForState(Task task, int state)
    {
        for (int i = 0; i < 1000 && StateOf(task) != state; i++)
            Thread.Sleep(5);
    }

    static void Main()
    {
        Console.WriteLine("1. The type the compiler generated for SumPagesAsync");
        Describe("optimised (Release)", typeof(Optimized));
        Describe("unoptimised (Debug)", typeof(Unoptimized));

        Console.WriteLine();
        Console.WriteLine("2. One call, stopped at each await (pages given one at a time)");
        string[] pages = { "one two three", "four five", "six" };
        var requested = new TaskCompletionSource<string>?[pages.Length];
        Task<long> sum = Optimized.SumPagesAsync(i => (requested[i - 1] = new TaskCompletionSource<string>()).Task,
            pages.Length, delayMs: 20);
        Console.WriteLine($"  the Task returned is the box the struct was copied into: {Name(sum.GetType())}");
        Show("returned, waiting for page 1:", sum);
        for (int p = 0; p < pages.Length; p++)
        {
            requested[p]!.SetResult(pages[p]); // runs MoveNext here, up to Task.Delay
            Show($"page {p + 1} given, in Task.Delay:", sum);
            if (p + 1 < pages.Length)
            {
                WaitForState(sum, 0); // the delay's continuation asked for the next page
                Show($"waiting for page {p + 2}:", sum);
            }
        }
        long total = sum.GetAwaiter().GetResult();
        // The box resets its copy right after the Task completes, on the
        // thread that completed it: give that thread a moment.
        bool cleared = false;
        for (int i = 0; i < 200 && !cleared; i++)
        {
            object done = BoxedStateMachine(sum)!;
            cleared = done.Equals(Activator.CreateInstance(done.GetType()));
            if (!cleared)
                Thread.Sleep(5);
        }
        Console.WriteLine($"  done, {total} words: {(cleared ? "the box has reset its state machine to default, so that the GC can free what it held" : "the state machine is still in the box")}");

        Console.WriteLine();
        Console.WriteLine("3. A call whose awaits all complete at once");
        Task<long> now = Optimized.SumPagesAsync(i => Task.FromResult("a b"), 2, delayMs: 0);
        Console.WriteLine($"  completed inside the call: {now.IsCompleted}, result {now.Result}; the Task is a {Name(now.GetType())}, " +
            (BoxedStateMachine(now) == null ? "with no state machine in it: the struct stayed on the stack" : "with a state machine box"));
    }
}
