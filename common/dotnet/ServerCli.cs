// common/dotnet/ServerCli.cs: the server contract of the course, for its C# programs.
//
// The same contract as common/net.c gives the C servers (DESIGN.md, section 3):
//   -b ADDR   IPv4 address to listen on (default 127.0.0.1, never 0.0.0.0 by default)
//   -p PORT   port (default 8080; 0 picks a free one)
//   -h        usage on stdout, exit 0
// The first line on stdout, flushed, is "listening on ADDR:PORT" with the real
// port. SIGINT and SIGTERM ask for a clean stop (the program then exits 0).
// Bad arguments: the reason and the usage on stderr, exit 2.
//
// A program links this file from its .csproj:
//   <Compile Include="../../../../common/dotnet/ServerCli.cs" Link="ServerCli.cs" />

using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Course;

/// <summary>An option of one program beyond -b, -p and -h.</summary>
/// <param name="Letter">the option's letter, as in "-s"</param>
/// <param name="Arg">the name of its value in the usage ("SIZE"), or null for a flag</param>
/// <param name="Help">its line in the usage</param>
/// <param name="Accept">takes the value (null for a flag); returns an error message, or null</param>
public sealed record ExtraOption(char Letter, string? Arg, string Help, Func<string?, string?> Accept);

public sealed class ServerCli
{
    public IPAddress Address { get; private set; } = IPAddress.Loopback;
    public int Port { get; private set; } = 8080;

    readonly string _prog;
    readonly string _summary;
    readonly IReadOnlyList<ExtraOption> _extra;

    ServerCli(string prog, string summary, IReadOnlyList<ExtraOption> extra)
    {
        _prog = prog;
        _summary = summary;
        _extra = extra;
    }

    /// <summary>Parses -b, -p, -h and the extra options; exits 0 on -h, 2 on an error.</summary>
    public static ServerCli Parse(string[] args, string prog, string summary, params ExtraOption[] extra)
    {
        var cli = new ServerCli(prog, summary, extra);
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            if (a.Length != 2 || a[0] != '-')
                cli.Fail($"unexpected argument '{a}'");
            char letter = a[1];
            if (letter == 'h')
            {
                Console.Out.Write(cli.Usage());
                Console.Out.Flush();
                Environment.Exit(0);
            }
            ExtraOption? opt = null;
            foreach (var o in extra)
                if (o.Letter == letter)
                    opt = o;
            bool takesValue = letter == 'b' || letter == 'p' || (opt != null && opt.Arg != null);
            if (letter != 'b' && letter != 'p' && opt == null)
                cli.Fail($"unknown option {a}");
            string? value = null;
            if (takesValue)
            {
                if (i + 1 >= args.Length)
                    cli.Fail($"option {a} needs a value");
                value = args[++i];
            }
            string? error = letter switch
            {
                'b' => cli.SetAddress(value!),
                'p' => cli.SetPort(value!),
                _ => opt!.Accept(value),
            };
            if (error != null)
                cli.Fail(value == null ? $"{a}: {error}" : $"{a} {value}: {error}");
        }
        return cli;
    }

    /// <summary>A whole number from MIN to MAX, for an extra option's Accept.</summary>
    public static string? ParseInt(string? s, int min, int max, out int value)
    {
        if (int.TryParse(s, System.Globalization.NumberStyles.None, null, out value) && value >= min && value <= max)
            return null;
        return $"not a number from {min} to {max}";
    }

    string? SetAddress(string s)
    {
        // Dotted quad only: IPAddress.Parse also takes "1" (0.0.0.1) and IPv6.
        string[] parts = s.Split('.');
        if (parts.Length != 4)
            return "not an IPv4 address";
        foreach (string p in parts)
            if (p.Length is 0 or > 3 || !byte.TryParse(p, System.Globalization.NumberStyles.None, null, out _))
                return "not an IPv4 address";
        Address = IPAddress.Parse(s);
        return null;
    }

    string? SetPort(string s)
    {
        if (ParseInt(s, 0, 65535, out int port) != null)
            return "not a port number (0-65535)";
        Port = port;
        return null;
    }

    string Usage()
    {
        var u = new System.Text.StringBuilder();
        u.Append($"usage: {_prog} [-b ADDR] [-p PORT]{(_extra.Count > 0 ? " [options]" : "")}\n");
        u.Append(_summary).Append('\n');
        u.Append("  -b ADDR   address to listen on (default 127.0.0.1)\n");
        u.Append("  -p PORT   port to listen on, 0 for any free port (default 8080)\n");
        foreach (var o in _extra)
            u.Append($"  {("-" + o.Letter + (o.Arg != null ? " " + o.Arg : "")).PadRight(10)}{o.Help}\n");
        u.Append("  -h        show this help\n");
        return u.ToString();
    }

    void Fail(string message)
    {
        Console.Error.Write($"{_prog}: {message}\n{Usage()}");
        Environment.Exit(2);
    }

    /// <summary>
    /// A listening socket on ADDR:PORT, announced on stdout. SO_REUSEADDR is set
    /// through the raw option: Socket's ReuseAddress also sets SO_REUSEPORT on
    /// Linux, which would let a second live server share the port.
    /// </summary>
    public Socket Listen()
    {
        LoadLazyParts();
        RefuseWithoutRoom();
        var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            const int SOL_SOCKET = 1, SO_REUSEADDR = 2; // Linux values
            if (OperatingSystem.IsLinux())
                s.SetRawSocketOption(SOL_SOCKET, SO_REUSEADDR, BitConverter.GetBytes(1));
            s.Bind(new IPEndPoint(Address, Port));
            s.Listen((int)SocketOptionName.MaxConnections);
        }
        catch (SocketException e)
        {
            Console.Error.WriteLine($"{_prog}: listen on {Address}:{Port}: {e.Message}");
            Environment.Exit(1);
        }
        var at = (IPEndPoint)s.LocalEndPoint!;
        Console.Out.Write($"listening on {at.Address}:{at.Port}\n");
        Console.Out.Flush();
        return s;
    }

    /// <summary>
    /// How many clients this process may hold at once and still leave RESERVE
    /// descriptors to the runtime, from the limit on open files (ulimit -n) and
    /// the descriptors already open; int.MaxValue where the limit is unknown.
    ///
    /// A C server that runs out of descriptors gets EMFILE from accept() and
    /// can wait. A .NET process also needs descriptors behind your back: a
    /// pipe for each new thread (the thread pool adds threads when clients
    /// arrive), /proc/stat for the pool's CPU reading, an assembly loaded on
    /// first use. On Linux with .NET 10, a thread created at the limit ends the
    /// process ("Out of memory."). So the servers stop accepting before the
    /// limit, and the clients over it wait in the listen backlog.
    /// </summary>
    public static int MaxClients(int reserve = RuntimeReserve)
    {
        if (!Descriptors(out long limit, out int open))
            return int.MaxValue;
        return (int)Math.Clamp(limit - open - reserve, 1, int.MaxValue);
    }

    /// <summary>Descriptors MaxClients keeps for the runtime's own use.</summary>
    public const int RuntimeReserve = 32;

    /// <summary>
    /// The limit on open files (getrlimit) and how many are open, on Linux;
    /// false where either is unknown ("unlimited", no /proc). Under a limit of
    /// 4096 or less it opens nothing to count them: fcntl(F_GETFD) on each
    /// descriptor below the limit, which works with every one in use, when
    /// even /proc/self/fd cannot be opened. Above, it reads /proc/self/fd
    /// rather than make thousands of calls (one stop each under strace).
    /// </summary>
    static bool Descriptors(out long limit, out int open)
    {
        limit = 0;
        open = 0;
        const int RLIMIT_NOFILE = 7, F_GETFD = 1; // Linux values
        if (!OperatingSystem.IsLinux() || GetRlimit(RLIMIT_NOFILE, out RLimit rl) != 0 || rl.Cur > int.MaxValue)
            return false;
        limit = (long)rl.Cur;
        if (limit > 4096)
        {
            try
            {
                open = System.IO.Directory.GetFileSystemEntries("/proc/self/fd").Length;
                return true;
            }
            catch (System.IO.IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
            return false;
        }
        for (int fd = 0; fd < limit; fd++)
            if (Fcntl(fd, F_GETFD, 0) >= 0)
                open++;
        return true;
    }

    [StructLayout(LayoutKind.Sequential)]
    struct RLimit
    {
        public nuint Cur, Max; // rlim_t: unsigned long
    }

    [DllImport("libc", EntryPoint = "getrlimit")]
    static extern int GetRlimit(int resource, out RLimit limit);

    [DllImport("libc", EntryPoint = "fcntl")]
    static extern int Fcntl(int fd, int cmd, int arg);

    [DllImport("libc", EntryPoint = "write")]
    static extern nint Write(int fd, byte[] buf, nint count);

    /// <summary>
    /// Exits 1, with one line on stderr, when the limit on open files leaves no
    /// room for a client beside what the runtime holds and RuntimeReserve: a
    /// learner who lowers the limit to watch EMFILE gets a reason, not a crash
    /// at the first accept. Called after LoadLazyParts, before the socket.
    /// </summary>
    void RefuseWithoutRoom()
    {
        if (!Descriptors(out long limit, out int open) || limit - open - RuntimeReserve >= 1)
            return;
        // Near the limit some lazy parts may have failed to load, quietly: then
        // the count is short of what the runtime needs, and names no figure.
        string raise = limit - open >= 8 ? $"raise the limit above {open + RuntimeReserve}" : "raise the limit";
        Console.Error.Write($"{_prog}: ulimit -n {limit} leaves no room for clients: the .NET runtime holds " +
            $"{open} descriptors already and keeps {RuntimeReserve} spare; {raise}\n");
        Environment.Exit(1);
    }

    /// <summary>
    /// Runs before Main (a module initializer, in every program that links this
    /// file). Under a very low limit the runtime runs out of descriptors while
    /// it still loads the assemblies that Main itself needs (System.Console,
    /// System.Net.Sockets...), before Main could check anything, and the
    /// failed load is an unhandled exception. This turns that one case into a
    /// line on stderr and exit 1. Only CoreLib is used here, and the line is
    /// written with write(2): System.Console may be the assembly that failed.
    /// </summary>
    [ModuleInitializer]
    internal static void ExplainDescriptorExhaustion()
    {
        AppDomain.CurrentDomain.UnhandledException += (_, _) =>
        {
            // within a few descriptors of the limit: a failed load or thread
            if (!Descriptors(out long limit, out int open) || open + 8 < limit)
                return; // another failure: the runtime reports it as usual
            string line = $"{AppDomain.CurrentDomain.FriendlyName}: ulimit -n {limit} is too low: the .NET " +
                $"runtime ran out of descriptors while loading itself ({open} open); raise the limit\n";
            var bytes = new byte[line.Length];
            for (int i = 0; i < line.Length; i++)
                bytes[i] = (byte)line[i]; // ASCII
            Write(2, bytes, bytes.Length);
            Environment.Exit(1);
        };
    }

    /// <summary>
    /// Opens now what the runtime would open on a server's first error. It
    /// loads assemblies lazily, each one an open file (two descriptors, in
    /// fact): a server out of descriptors (EMFILE) could then not even log, and
    /// a client's first reset would look like a descriptor leak. Console.Error
    /// is opened on first use. And every socket error that reaches an await is
    /// given the stack trace of where it surfaced, with file and line
    /// (ExceptionDispatchInfo.SetCurrentStackTrace, in System.Net.Sockets'
    /// AwaitableSocketAsyncEventArgs): the first one loads
    /// System.Diagnostics.StackTrace, System.Reflection.Metadata and the .pdb.
    /// </summary>
    static void LoadLazyParts()
    {
        Console.Error.Flush();
        _ = System.Runtime.ExceptionServices.ExceptionDispatchInfo.SetCurrentStackTrace(
            new SocketException((int)SocketError.ConnectionReset)).StackTrace;
        // The first AcceptAsync runs SocketsTelemetry's static constructor,
        // which loads System.Diagnostics.DiagnosticSource, and hands work to
        // the thread pool: load both now, so that RefuseWithoutRoom counts them.
        _ = typeof(System.Diagnostics.Metrics.Meter).Assembly;
        _ = typeof(ThreadPool).Assembly;
    }

    /// <summary>
    /// Cancels STOP on SIGINT or SIGTERM instead of letting the runtime end the
    /// process. Call it before Listen(): a supervisor may signal as soon as the
    /// port is printed. Keep the result alive (a disposed registration is gone).
    /// </summary>
    public static IDisposable StopOnSignals(CancellationTokenSource stop)
    {
        void OnSignal(PosixSignalContext context)
        {
            context.Cancel = true; // no default action: the program ends itself, with 0
            try
            {
                stop.Cancel();
            }
            catch (ObjectDisposedException)
            {
                // a signal during the very end of Main: nothing left to stop
            }
        }
        foreach (int sig in new[] { 2 /* SIGINT */, 15 /* SIGTERM */ })
            UnignoreSignal(sig);
        var regs = new[]
        {
            PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal),
        };
        return new Registrations(regs);
    }

    [DllImport("libc", EntryPoint = "sigaction")]
    static extern int SigactionQuery(int sig, IntPtr act, IntPtr oldact);

    [DllImport("libc", EntryPoint = "signal")]
    static extern IntPtr SetSignalDisposition(int sig, IntPtr handler);

    /// <summary>
    /// A program started in the background by a shell without job control
    /// (a script's `server &amp;`, bats) inherits SIGINT ignored. The runtime
    /// respects that, as nohup expects: it installs no handler for an ignored
    /// SIGINT, and a PosixSignalRegistration then never hears of it. A C
    /// server's sigaction() simply replaces the disposition; here an ignored
    /// signal is put back to its default first, and the registration below
    /// installs the runtime's handler over it. Linux only (glibc's struct
    /// sigaction starts with the handler); a handled signal is left alone.
    /// </summary>
    static void UnignoreSignal(int sig)
    {
        if (!OperatingSystem.IsLinux())
            return;
        IntPtr old = Marshal.AllocHGlobal(256); // larger than any struct sigaction
        try
        {
            if (SigactionQuery(sig, IntPtr.Zero, old) == 0 && Marshal.ReadIntPtr(old) == (IntPtr)1 /* SIG_IGN */)
                SetSignalDisposition(sig, IntPtr.Zero /* SIG_DFL */);
        }
        finally
        {
            Marshal.FreeHGlobal(old);
        }
    }

    sealed class Registrations(PosixSignalRegistration[] regs) : IDisposable
    {
        public void Dispose()
        {
            foreach (var r in regs)
                r.Dispose();
        }
    }
}
