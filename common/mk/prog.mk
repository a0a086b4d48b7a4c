# common/mk/prog.mk: build the programs of one folder.
#
# A chapter, solution or exercise Makefile is a few lines:
#
#     PROGS := echo-poll poll-cost          # each built from NAME.c
#     echo-poll_SRCS := conn.c              # optional extra sources
#     poll-cost_LDLIBS := -lpthread         # optional extra libraries
#     include ../../common/mk/prog.mk
#
# Binaries go to build/<the folder's path in the repository>/, so
# chapters/03-nonblocking/echo-poll.c becomes build/chapters/03-nonblocking/echo-poll.
# Every program links common/ (net, buf; uring-why on Linux) and can include its
# headers: "net.h", "buf.h", "clock.h", "list.h", "todo.h"...
#
# Sources come from this folder and, after it, from each folder of SRC_DIRS
# in turn: a file present here wins over another folder's copy of the same
# name. A solution or exercise that holds only the file the learner writes
# takes the chapter's other files from the chapter folder:
#
#     PROGS := file-server
#     file-server_SRCS := pool.c loop.c     # pool.c here, loop.c from the chapter
#     SRC_DIRS := ../../../chapters/10-threadpool
#
# and a library built from an earlier chapter's files (chapter 11's cio.mk,
# chapter 13's rt.mk) adds that chapter's folder the same way, before this
# file is included. A name with a folder (cio/ready.c) is looked for under
# each folder (DIR/cio/ready.c) and built into the same subfolder of the
# output. Every folder of SRC_DIRS is on the include path, as this one is.
# SRC_FROM := DIR, one folder, is the older spelling of the same thing: it
# goes first in SRC_DIRS.

include $(dir $(lastword $(MAKEFILE_LIST)))config.mk
include $(TOP)/common/mk/common-lib.mk

HERE := $(abspath $(CURDIR))
REL := $(patsubst $(TOP)/%,%,$(HERE))
OUT := $(BUILD)/$(REL)

# this folder, then SRC_FROM and SRC_DIRS, each once, in that order
prog__uniq = $(if $(1),$(firstword $(1)) $(call prog__uniq,$(filter-out $(firstword $(1)),$(1))))
SRC_DIRS_ABS := $(call prog__uniq,$(HERE) $(abspath $(SRC_FROM) $(SRC_DIRS)))

CFLAGS_DIR := $(CFLAGS_BASE) $(addprefix -I,$(SRC_DIRS_ABS)) -I$(TOP)/common
# An exercise as shipped has TODO() where the learner's code goes, so the
# variables that code would use look unused: that is expected, not a warning.
ifneq ($(filter exercises/%,$(REL)),)
CFLAGS_DIR += -Wno-unused-variable -Wno-unused-parameter -Wno-unused-but-set-variable \
              -Wno-unused-function -Wno-unused-label -Wno-return-type
endif

BINS := $(addprefix $(OUT)/,$(PROGS))

.PHONY: all clean where
all: $(BINS) $(EXTRA_TARGETS)
	@$(if $(QUIET_WHERE),true,echo "built $(REL): $(PROGS) -> $(patsubst $(TOP)/%,%,$(OUT))/")

where:
	@echo $(OUT)

define prog_rule
$(OUT)/$(1): $(OUT)/$(1).o $(addprefix $(OUT)/,$($(1)_SRCS:.c=.o)) $(COMMON_LIB)
	@mkdir -p $$(@D)
	@$(if $(Q),echo "  LD      $$(patsubst $(TOP)/%,%,$$@)")
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(COMMON_LIB) $($(1)_LDLIBS) $(LDLIBS)
endef
$(foreach p,$(PROGS),$(eval $(call prog_rule,$(p))))

# One pattern rule per source folder, in SRC_DIRS_ABS's order: of the rules
# whose source exists, make takes the first, so this folder's file wins.
define src_dir_rule
$(OUT)/%.o: $(1)/%.c
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  CC      $$(patsubst $$(TOP)/%,%,$$<)")
	$$(Q)$$(CC) $$(CFLAGS_DIR) $$(CFLAGS) -MMD -MP -c -o $$@ $$<
endef
$(foreach d,$(SRC_DIRS_ABS),$(eval $(call src_dir_rule,$(d))))

clean:
	rm -rf $(OUT)

# Every object's header dependencies (.d files), stale ones dropped.
include $(TOP)/common/mk/deps.mk

# `make test` inside a chapter folder runs that chapter's tests (its
# programs and its exercises' solutions) through the top-level runner.
ifneq ($(filter chapters/%,$(REL)),)
.PHONY: test
test:
	$(Q)$(MAKE) --no-print-directory -C $(TOP) test CH=$(firstword $(subst -, ,$(notdir $(REL))))
endif
