/* SPDX-License-Identifier: MIT */
/* fiber.c: stackful coroutines on ucontext (see fiber.h).
 *
 * Two tools need to be told when the stack changes under them:
 *
 * - AddressSanitizer keeps a shadow of every stack and, by default, thinks
 *   the thread has one. After a swapcontext() it would see the stack pointer
 *   jump into memory it does not know as a stack, and can report false
 *   errors (stack-buffer-overflow, or a crash while unwinding). The fix is its
 *   fiber API: __sanitizer_start_switch_fiber() just before each switch,
 *   __sanitizer_finish_switch_fiber() just after it, on the new stack.
 * - valgrind's memcheck treats a large jump of the stack pointer as a switch
 *   to a new stack only if that memory was registered as one
 *   (VALGRIND_STACK_REGISTER); otherwise it warns ("client switching stacks?")
 *   and may misjudge what is addressable. The macros cost a few instructions
 *   outside valgrind, and are compiled in when <valgrind/valgrind.h> exists.
 */
#include "fiber.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define FIBER_ASAN 1
#else
#define FIBER_ASAN 0
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define FIBER_VALGRIND 1
#endif
#endif
#ifndef FIBER_VALGRIND
#define FIBER_VALGRIND 0
#endif

/* makecontext() passes only int arguments: the fiber being started goes
 * through this instead (one thread, one start at a time). */
static struct fiber *fiber__starting;

static void fiber__before_switch(void **fake_save, const void *to_stack, size_t to_size)
{
#if FIBER_ASAN
    __sanitizer_start_switch_fiber(fake_save, to_stack, to_size);
#else
    (void)fake_save, (void)to_stack, (void)to_size;
#endif
}

static void fiber__after_switch(void *fake, const void **from_stack, size_t *from_size)
{
#if FIBER_ASAN
    __sanitizer_finish_switch_fiber(fake, from_stack, from_size);
#else
    (void)fake, (void)from_stack, (void)from_size;
#endif
}

static void fiber__entry(void)
{
    struct fiber *f = fiber__starting;

    fiber__after_switch(NULL, &f->caller_stack, &f->caller_stack_size);
    f->fn(f->arg);
    f->finished = true;
    /* NULL: this stack will never run again, its fake frames can go */
    fiber__before_switch(NULL, f->caller_stack, f->caller_stack_size);
    setcontext(&f->caller);
}

int fiber_init(struct fiber *f, size_t stack_size, void (*fn)(void *arg), void *arg)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    stack_size = (stack_size + page - 1) / page * page;
    *f = (struct fiber){.fn = fn, .arg = arg, .map_size = stack_size + page};
    /* MAP_NORESERVE: the stack is an upper bound; pages become memory only
     * when touched. The lowest page is the guard: an overflow faults. */
    f->map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (f->map == MAP_FAILED)
        return -errno;
    if (mprotect(f->map, page, PROT_NONE) < 0) {
        int err = errno;
        munmap(f->map, f->map_size);
        return -err;
    }
    if (getcontext(&f->ctx) < 0)
        return -errno;
    f->ctx.uc_stack.ss_sp = (char *)f->map + page;
    f->ctx.uc_stack.ss_size = stack_size;
    f->ctx.uc_link = NULL; /* fiber__entry never returns: it switches back itself */
    makecontext(&f->ctx, fiber__entry, 0);
#if FIBER_VALGRIND
    f->valgrind_id =
        VALGRIND_STACK_REGISTER(f->ctx.uc_stack.ss_sp, (char *)f->ctx.uc_stack.ss_sp + stack_size);
#endif
    return 0;
}

/* snippet: switch */
void fiber_resume(struct fiber *f)
{
    void *fake = NULL;

    if (f->finished)
        return;
    fiber__starting = f;
    fiber__before_switch(&fake, f->ctx.uc_stack.ss_sp, f->ctx.uc_stack.ss_size);
    swapcontext(&f->caller, &f->ctx); /* saves our registers, loads the fiber's */
    fiber__after_switch(fake, NULL, NULL);
}

void fiber_suspend(struct fiber *f)
{
    fiber__before_switch(&f->asan_fake_stack, f->caller_stack, f->caller_stack_size);
    swapcontext(&f->ctx, &f->caller); /* back into fiber_resume(), after its swapcontext */
    fiber__after_switch(f->asan_fake_stack, &f->caller_stack, &f->caller_stack_size);
}
/* end snippet */

void fiber_fini(struct fiber *f)
{
    if (!f->map)
        return;
#if FIBER_VALGRIND
    VALGRIND_STACK_DEREGISTER(f->valgrind_id);
#endif
#if FIBER_ASAN
    /* a fiber's frames may leave its stack's shadow poisoned: clear it, or
     * the next mapping at this address would inherit false errors */
    ASAN_UNPOISON_MEMORY_REGION(f->map, f->map_size);
#endif
    munmap(f->map, f->map_size);
    f->map = NULL;
}
