# chapters/15-mini-redis/stage.mk: the Makefile of each stage of the
# capstone (solutions/15-mini-redis/stage-N/, and the learner's copies in
# exercises/). A stage has no program of its own: its tests run one program,
# under exercises/ the learner's (../my-redis/, built into
# build/exercises/15-mini-redis/my-redis/), under solutions/ the reference,
# this chapter's mini-redis. This chapter is built either way: the tests'
# client, resp-cat, is one of its programs. (The top Makefile leaves the
# stage folders out of make all: the folders they build are in it already.)
STAGE_CHAPTER := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
STAGE_PROGRAM := $(abspath $(CURDIR)/../my-redis)

.PHONY: all clean where
all:
	@$(MAKE) --no-print-directory -C $(STAGE_CHAPTER)
ifeq ($(notdir $(abspath $(CURDIR)/../..)),exercises)
	@$(MAKE) --no-print-directory -C $(STAGE_PROGRAM)
endif

clean:
	@true
