// file-read-dotnet: what `await File.ReadAllTextAsync(path)` does on Linux.
//
// epoll cannot wait for a regular file (epoll_ctl says EPERM: chapter 04's
// epoll-fds), so .NET does here what chapter 10's file-server does: the read
// is a blocking pread() run on a thread-pool thread, and the await resumes
// when it is done. The program prints the threads involved, by their Linux
// thread ids (the ones strace shows) and names; under strace the reads
// themselves show on the pool's thread, and no epoll_ctl() or io_uring for
// the file:
//
//   make -C chapters/10-threadpool
//   build/chapters/10-threadpool/file-read-dotnet /etc/services
//   strace -f -e trace=openat,read,pread64,epoll_ctl,io_uring_setup \
//       build/chapters/10-threadpool/file-read-dotnet /etc/services

using System;
using System.IO;
using System.Threading.Tasks;

static class FileRead
{
    /// <summary>The Linux thread id of the calling thread, and the thread's name.</summary>
    static string ThisThread()
    {
        // /proc/thread-self is a link to /proc/PID/task/TID
        string tid = Path.GetFileName(new DirectoryInfo("/proc/thread-self").LinkTarget ?? "?");
        string name = File.ReadAllText($"/proc/self/task/{tid}/comm").Trim();
        return $"thread {tid} ({name})";
    }

    static async Task<int> Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: file-read-dotnet FILE");
            return 2;
        }
        string path = args[0];
        Console.WriteLine($"main: {ThisThread()}");
        Task<string> reading = File.ReadAllTextAsync(path);
        Console.WriteLine($"ReadAllTextAsync returned, {(reading.IsCompleted ? "already complete" : "not complete yet")}, on the same thread");
        string text = await reading;
        Console.WriteLine($"after the await: {text.Length} characters, on {ThisThread()}");
        return 0;
    }
}
