# common/kqueue-linux/kqueue.mk: build programs written against <sys/event.h>.
#
#     PROGS        := echo-kqueue
#     KQUEUE_PROGS := echo-kqueue          # the ones that use kqueue
#     include ../../common/kqueue-linux/kqueue.mk
#     include ../../common/mk/prog.mk
#
# On Linux, <sys/event.h> comes from common/kqueue-linux/include and the
# KQUEUE_PROGS link libkqueue-linux.a, which is built first if needed. On
# FreeBSD and macOS the system's header and libc are used: this file adds
# nothing. Set NAME_LDLIBS before including it (it appends to them).

ifndef COURSE_KQUEUE_MK
COURSE_KQUEUE_MK := 1

KQUEUE_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(KQUEUE_DIR)/../mk/config.mk

ifeq ($(UNAME_S),Linux)
# The rules below must not become the default goal of the including Makefile.
kqueue_goal_before := $(.DEFAULT_GOAL)

KQUEUE_LIB := $(BUILD)/common/kqueue-linux/libkqueue-linux.a
override CFLAGS += -I$(KQUEUE_DIR)/include
$(foreach p,$(KQUEUE_PROGS),$(eval $(p)_LDLIBS += $(KQUEUE_LIB) -pthread))

# The same output folder as prog.mk's, so the programs wait for the library.
KQUEUE_OUT := $(BUILD)/$(patsubst $(TOP)/%,%,$(abspath $(CURDIR)))
$(addprefix $(KQUEUE_OUT)/,$(KQUEUE_PROGS)): $(KQUEUE_LIB)

# The library's own Makefile decides whether it is up to date (make looks at
# the file's time again afterwards: the programs relink only if it changed).
.PHONY: kqueue-linux-force
kqueue-linux-force:
$(KQUEUE_LIB): kqueue-linux-force
	$(Q)$(MAKE) --no-print-directory -C $(KQUEUE_DIR) lib

.DEFAULT_GOAL := $(kqueue_goal_before)
endif

endif
