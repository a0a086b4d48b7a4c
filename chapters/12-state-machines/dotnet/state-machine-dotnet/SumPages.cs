// SumPagesAsync, the method chapter 12 turns into a state machine by hand
// (sum-pages-sm.c), with the page source passed in: the program feeds it
// pages when it chooses, to look at the state machine in between.
//
// Compiled twice: into state-machine-dotnet as it is (optimised, as in a
// Release build) and into SumPagesUnoptimized (as a Debug build compiles it),
// so that the program can set the two generated types side by side.

using System;
using System.Threading.Tasks;

#if UNOPTIMIZED
namespace Course.Unoptimized;
#else
namespace Course.Optimized;
#endif

public static class SumPages
{
    public static async Task<long> SumPagesAsync(Func<int, Task<string>> getString, int pages, int delayMs)
    {
        long total = 0;
        for (int i = 1; i <= pages; i++)
        {
            string page = await getString(i); // await #0
            long words = CountWords(page);
            total += words;
            await Task.Delay(delayMs);        // await #1
        }
        return total;
    }

    public static long CountWords(string page) =>
        page.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries).Length;
}
