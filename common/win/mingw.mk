# common/win/mingw.mk: build Windows programs with mingw-w64.
#
# The course's prog.mk builds with the native gcc and links common/libcourse.a,
# which is POSIX code: a Windows program cannot use either. A Makefile that
# builds Windows programs lists them and includes this file instead:
#
#     EXES := echo-iocp iocp-read          # each built from NAME.c
#     echo-iocp_SRCS := conn.c win.c       # extra sources
#     SRC_DIRS := ../../chapters/09-iocp   # optional: more folders to take sources from
#     include ../../common/win/mingw.mk
#
# A source (NAME.c or one of _SRCS) is looked for in this folder, then in
# each folder of SRC_DIRS in turn (as in prog.mk), then here in common/win/
# (win.c, the Windows twin of common/net.c); each of those folders is on
# the include path too, so win.h is found wherever the program is.
#
# Programs go to build/<the folder's path>/NAME.exe. Without the cross
# compiler the build says so and succeeds, so `make` of the whole course
# still works; the tests then skip with the same reason.
#
# SAN=...: mingw-w64 has no AddressSanitizer or UBSan runtime, so the
# sanitizer flags are left out here: a SAN build gets the plain .exe.

WIN_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(WIN_DIR)/../mk/config.mk

MINGW_CC ?= x86_64-w64-mingw32-gcc
HERE := $(abspath $(CURDIR))
REL := $(patsubst $(TOP)/%,%,$(HERE))
OUT := $(BUILD)/$(REL)
WIN_SRC_DIRS := $(HERE) $(abspath $(SRC_DIRS)) $(WIN_DIR)

NOT_FOR_MINGW := -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer
WIN_CFLAGS := $(filter-out $(NOT_FOR_MINGW),$(CFLAGS_BASE)) $(addprefix -I,$(WIN_SRC_DIRS)) -I$(TOP)/common
WIN_LDFLAGS := $(filter-out $(NOT_FOR_MINGW),$(LDFLAGS_BASE))
WIN_LDLIBS := -lws2_32 -lmswsock
ifneq ($(filter exercises/%,$(REL)),)
# as in prog.mk: an exercise as shipped has unused variables where its TODO is
WIN_CFLAGS += -Wno-unused-variable -Wno-unused-parameter -Wno-unused-but-set-variable \
              -Wno-unused-function -Wno-unused-label -Wno-return-type
endif

vpath %.c $(WIN_SRC_DIRS)

.DEFAULT_GOAL := all
.PHONY: all clean where
where:
	@echo $(OUT)

clean:
	rm -rf $(OUT)

ifeq ($(shell command -v $(MINGW_CC) 2>/dev/null),)
all:
	@echo "skipping $(REL): $(MINGW_CC) not installed (make deps)"
else
all: $(addprefix $(OUT)/,$(addsuffix .exe,$(EXES)))
	@$(if $(QUIET_WHERE),true,echo "built $(REL): $(addsuffix .exe,$(EXES)) -> $(patsubst $(TOP)/%,%,$(OUT))/")

define exe_rule
$(OUT)/$(1).exe: $(OUT)/$(1).o $(addprefix $(OUT)/,$($(1)_SRCS:.c=.o))
	@mkdir -p $$(@D)
	@$(if $(Q),echo "  LD      $$(patsubst $(TOP)/%,%,$$@)")
	$(Q)$(MINGW_CC) $(WIN_LDFLAGS) $(LDFLAGS) -o $$@ $$^ $(WIN_LDLIBS)
endef
$(foreach e,$(EXES),$(eval $(call exe_rule,$(e))))

$(OUT)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $(patsubst $(TOP)/%,%,$<) (mingw-w64)")
	$(Q)$(MINGW_CC) $(WIN_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

include $(WIN_DIR)/../mk/deps.mk
endif

# `make test` inside the chapter folder runs the chapter's tests, as prog.mk does.
ifneq ($(filter chapters/%,$(REL)),)
.PHONY: test
test:
	$(Q)$(MAKE) --no-print-directory -C $(TOP) test CH=$(firstword $(subst -, ,$(notdir $(REL))))
endif
