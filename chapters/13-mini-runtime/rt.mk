# chapters/13-mini-runtime/rt.mk: the runtime's sources and how to build
# them, shared by the chapter's Makefile and its exercises'. Include it after
# listing PROGS (and before prog.mk); RT_PROGS are the programs that link the
# runtime.
#
# The runtime stands on three earlier chapters, built from their own folders
# (nothing is copied): chapter 11's cio library (cio/, through its cio.mk,
# which brings chapter 10's pool and common/kqueue-linux along) and chapter
# 12's coro.h, a header.

.DEFAULT_GOAL := all # not the first rule of an included .d file

RT_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
RT_CIO_DIR := $(abspath $(RT_DIR)/../11-one-api)
RT_CORO_DIR := $(abspath $(RT_DIR)/../12-state-machines)

RT_SRCS := rt/loop.c rt/future.c rt/task.c rt/timer.c rt/when.c rt/cancel.c rt/io.c rt/offload.c
SRC_DIRS += $(RT_DIR)
override CFLAGS += -I$(RT_DIR)/rt -I$(RT_CORO_DIR)

CIO_PROGS := $(RT_PROGS)
include $(RT_CIO_DIR)/cio.mk
$(foreach p,$(RT_PROGS),$(eval $(p)_SRCS += $(RT_SRCS)))
