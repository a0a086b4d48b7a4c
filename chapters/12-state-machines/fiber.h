/* SPDX-License-Identifier: MIT */
/* fiber.h: stackful coroutines on ucontext (makecontext/swapcontext).
 *
 * A fiber has a stack of its own. fiber_suspend() saves the registers
 * (stack pointer included) and switches back to whoever resumed it;
 * fiber_resume() switches to the saved registers. Everything on the fiber's
 * stack stays where it was, so a suspended fiber keeps its locals and its
 * whole chain of calls: code inside reads like blocking code. The price is
 * the stack, reserved whole for every fiber, suspended or not.
 */
#ifndef CH12_FIBER_H
#define CH12_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <ucontext.h>

struct fiber {
    ucontext_t ctx;    /* the fiber's registers while it is suspended */
    ucontext_t caller; /* the resumer's registers while the fiber runs */
    void *map;         /* guard page + stack, one mmap */
    size_t map_size;
    void (*fn)(void *arg);
    void *arg;
    bool finished;
    unsigned valgrind_id;     /* the stack, as registered with valgrind (0: not) */
    void *asan_fake_stack;    /* AddressSanitizer's bookkeeping across switches */
    const void *caller_stack; /* the resumer's stack, for AddressSanitizer */
    size_t caller_stack_size;
};

/* Reserve a stack of stack_size bytes (plus a guard page below it) and
 * prepare fn(arg) to run on it at the first fiber_resume(). 0 or -errno. */
int fiber_init(struct fiber *f, size_t stack_size, void (*fn)(void *arg), void *arg);

/* Run the fiber until it suspends or returns. */
void fiber_resume(struct fiber *f);

/* From inside the fiber: switch back to fiber_resume()'s caller. */
void fiber_suspend(struct fiber *f);

/* Release the stack. The fiber must have finished (or never started). */
void fiber_fini(struct fiber *f);

#endif
