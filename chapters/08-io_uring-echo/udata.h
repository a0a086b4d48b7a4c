/* SPDX-License-Identifier: MIT */
/* udata.h: what a completion is about, for this chapter's servers.
 *
 * The kernel copies the 64-bit user_data of every SQE into the CQE(s) it
 * produces and never looks at it. It is the only link between a completion
 * and the program's state, so both servers pack two things into it.
 */
#ifndef CH08_UDATA_H
#define CH08_UDATA_H

#include <stddef.h>
#include <stdint.h>

/* snippet: user-data */
/* What a completion is about, packed in the 64 bits of user_data that the
 * kernel hands back untouched in the CQE:
 *
 *   bits 63..3  the struct conn the request belongs to (0 for the server's
 *               own requests: accept, signal, timer, cancel). malloc()
 *               returns memory aligned for any type, 16 bytes on x86-64 and
 *               arm64, so the three low bits of such a pointer are 0.
 *   bits  2..0  the operation (enum op).
 */
enum op { OP_ACCEPT, OP_RECV, OP_SEND, OP_SIGNAL, OP_TIMER, OP_CANCEL };
#define OP_BITS 3u
#define OP_MASK ((1u << OP_BITS) - 1)
_Static_assert(_Alignof(max_align_t) >= (1u << OP_BITS), "malloc alignment leaves no tag bits");

struct conn; /* each server defines its own */

static inline uint64_t ud_pack(const struct conn *c, enum op op)
{
    return (uint64_t)(uintptr_t)c | (uint64_t)op;
}
static inline enum op ud_op(uint64_t ud)
{
    return (enum op)(ud & OP_MASK);
}
static inline struct conn *ud_conn(uint64_t ud)
{
    return (struct conn *)(uintptr_t)(ud & ~(uint64_t)OP_MASK);
}
/* end snippet */

#endif
