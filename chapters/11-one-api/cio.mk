# chapters/11-one-api/cio.mk: the cio library's sources and how to build them,
# shared by the chapter's Makefile and its exercises'. Include it
# after listing PROGS (and before prog.mk); CIO_PROGS are the programs that
# link the library.
#
# The readiness backends read files on chapter 10's thread pool: its pool.c
# and handoff.c are compiled from chapters/10-threadpool, which goes on
# SRC_DIRS (prog.mk) after this chapter's folder.

.DEFAULT_GOAL := all # not the first rule of an included .d file

CIO_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
POOL_DIR := $(abspath $(CIO_DIR)/../10-threadpool)

CIO_SRCS := cio/cio.c cio/bufpool.c cio/stop.c cio/ready.c cio/offload.c \
            cio/cio_epoll.c cio/cio_kqueue.c cio/cio_uring.c cio/cio_poll.c \
            pool.c handoff.c
SRC_DIRS += $(CIO_DIR) $(POOL_DIR)

$(foreach p,$(CIO_PROGS),$(eval $(p)_SRCS += $(CIO_SRCS)))
$(foreach p,$(CIO_PROGS),$(eval $(p)_LDLIBS += -luring -pthread))

KQUEUE_PROGS += $(CIO_PROGS)
include $(CIO_DIR)/../../common/kqueue-linux/kqueue.mk
