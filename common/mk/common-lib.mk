# common/mk/common-lib.mk: rules for build/.../common/libcourse.a (net.c, buf.c,
# and on Linux uring-why.c).
#
# Included by prog.mk, so `cd chapters/01-blocking && make` builds the library
# it needs without a trip to the top-level Makefile.

ifndef COURSE_COMMON_LIB_MK
COURSE_COMMON_LIB_MK := 1

# The rules below must not become the default goal of the Makefile that
# includes this file (its `all`, defined later): remember the goal and put it
# back after them. An empty .DEFAULT_GOAL makes make pick the next target.
course_goal_before_lib := $(.DEFAULT_GOAL)

COMMON_SRCS := net.c buf.c
# Why io_uring is refused here: Linux only, but no liburing (the kernel's
# <linux/io_uring.h> is enough), so it is built wherever io_uring can exist.
ifeq ($(UNAME_S),Linux)
COMMON_SRCS += uring-why.c
endif
COMMON_OBJS := $(addprefix $(BUILD)/common/,$(COMMON_SRCS:.c=.o))
COMMON_LIB := $(BUILD)/common/libcourse.a

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $(patsubst $(TOP)/%,%,$@)")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/common/%.o: $(TOP)/common/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $(patsubst $(TOP)/%,%,$<)")
	$(Q)$(CC) $(CFLAGS_BASE) $(CFLAGS) -I$(TOP)/common -MMD -MP -c -o $@ $<

-include $(wildcard $(BUILD)/common/*.d)

.DEFAULT_GOAL := $(course_goal_before_lib)

endif
