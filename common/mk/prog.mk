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
# A solution or exercise that holds only the file the learner writes takes the
# chapter's other files from the chapter folder:
#
#     PROGS := file-server
#     file-server_SRCS := pool.c loop.c     # pool.c here, loop.c from the chapter
#     SRC_FROM := ../../../chapters/10-threadpool
#
# A file present in this folder wins over the chapter's copy of the same name.

include $(dir $(lastword $(MAKEFILE_LIST)))config.mk
include $(TOP)/common/mk/common-lib.mk

HERE := $(abspath $(CURDIR))
REL := $(patsubst $(TOP)/%,%,$(HERE))
OUT := $(BUILD)/$(REL)

CFLAGS_DIR := $(CFLAGS_BASE) -I$(HERE) -I$(TOP)/common
ifneq ($(SRC_FROM),)
SRC_FROM_ABS := $(abspath $(SRC_FROM))
CFLAGS_DIR += -I$(SRC_FROM_ABS)
endif
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

$(OUT)/%.o: $(HERE)/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $(patsubst $(TOP)/%,%,$<)")
	$(Q)$(CC) $(CFLAGS_DIR) $(CFLAGS) -MMD -MP -c -o $@ $<

ifneq ($(SRC_FROM),)
$(OUT)/%.o: $(SRC_FROM_ABS)/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $(patsubst $(TOP)/%,%,$<)")
	$(Q)$(CC) $(CFLAGS_DIR) $(CFLAGS) -MMD -MP -c -o $@ $<
endif

clean:
	rm -rf $(OUT)

# Every object's header dependencies, those of sources in subfolders
# (aio/cio_kqueue.c -> $(OUT)/aio/cio_kqueue.d) included: without them an
# object built from a subfolder is not rebuilt when a header it uses changes,
# and links against a struct of the old layout.
# A .d whose source is gone (moved or deleted since the last build, as a
# git pull may do) would stop make with "No rule to make target": it is
# dropped, with its object, which is then built from where its source is now.
DEP_FILES := $(wildcard $(OUT)/*.d $(OUT)/*/*.d)
ifneq ($(DEP_FILES),)
$(shell for d in $(DEP_FILES); do \
    s=$$(awk 'NR == 1 { sub(/^[^:]*:[ \t]*/, ""); if ($$1 != "" && $$1 != "\\") { print $$1; exit } } \
              NR == 2 { print $$1; exit }' "$$d"); \
    [ -z "$$s" ] || [ -e "$$s" ] || rm -f "$$d" "$${d%.d}.o"; done)
endif
-include $(wildcard $(OUT)/*.d $(OUT)/*/*.d)

# `make test` inside a chapter folder runs that chapter's tests (its
# programs and its exercises' solutions) through the top-level runner.
ifneq ($(filter chapters/%,$(REL)),)
.PHONY: test
test:
	$(Q)$(MAKE) --no-print-directory -C $(TOP) test CH=$(firstword $(subst -, ,$(notdir $(REL))))
endif
