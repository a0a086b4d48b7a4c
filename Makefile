# The course's one entry point. `make help` lists every target.
#
# Variables: CH=03 (one chapter), EX=03-nonblocking/poll-echo (one exercise),
# IMPL=solutions|exercises, FILTER=regex (passed to bats --filter),
# SAN=address,undefined | SAN=thread (sanitizer build in its own folder),
# VALGRIND=1 (make test: every server under valgrind's memcheck), JOBS=N (test files
# run at once; two per CPU by default),
# WERROR=1, V=1 (show commands), BENCH=quick|full (make bench), S=NAME,... (make
# trace: which servers), FORCE=1 (make
# solution before your copy passes; make exercises over your work), POLL=1
# (make watch checks files once a second instead of using inotify).

include common/mk/config.mk

CHAPTER_DIRS  := $(patsubst %/Makefile,%,$(sort $(wildcard chapters/[0-9][0-9]-*/Makefile)))
# The capstone's stages (chapters/15-mini-redis/stage.mk) build nothing of
# their own, only folders listed here already: left out, so that no two
# jobs build one folder at once.
not_stages = $(foreach d,$(1),$(if $(findstring /stage-,$(d)),,$(d)))
SOLUTION_DIRS := $(call not_stages,$(patsubst %/Makefile,%,$(sort $(wildcard solutions/[0-9][0-9]-*/*/Makefile))))
EXERCISE_DIRS := $(call not_stages,$(patsubst %/Makefile,%,$(sort $(wildcard exercises/[0-9][0-9]-*/*/Makefile))))
BUILD_DIRS    := $(CHAPTER_DIRS) $(SOLUTION_DIRS) $(EXERCISE_DIRS)
# What make test runs: the chapters' programs and the solutions (exercise
# tests run against the reference). Your copies in exercises/ are built by
# make ex, by make all, and here only with IMPL=exercises; a half-written
# exercise that does not compile yet stops neither make test nor the others.
TEST_DIRS     := $(CHAPTER_DIRS) $(SOLUTION_DIRS) $(if $(filter exercises,$(IMPL)),$(EXERCISE_DIRS))

SCRIPTS := common/mk

# The build folders are independent: build them one job per CPU unless -j
# was given (make -j1 builds one thing at a time). The scripts below get a
# clean MAKEFLAGS: a make they run themselves (make ex builds the exercise,
# a test builds a scratch copy) has no share in this make's jobs; the
# variables given on the command line reach them through the environment.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
RUN := env -u MAKEFLAGS -u MFLAGS

.DEFAULT_GOAL := all
.PHONY: all help setup deps doctor test test-long ex watch hint progress grade reset solution exercises suite snippets book bench bench-check trace trace-figures \
        lint format clean \
        common $(BUILD_DIRS)

help: ## list every target
	@echo "usage: make [target] [VAR=value ...]"
	@echo
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | \
	    awk -F'\t' '{ printf "  make %-13s %s\n", $$1, $$2 }'
	@echo
	@echo "variables: CH=03  EX=03-nonblocking/poll-echo  IMPL=solutions|exercises  FILTER=regex"
	@echo "           SAN=address,undefined | SAN=thread  VALGRIND=1  JOBS=N  WERROR=1  V=1  BENCH=quick|full"
	@echo "           S=echo-epoll-lt,echo-uring (make trace: which servers)"
	@echo "           FORCE=1 (make solution: without a pass; make exercises: over your work)  POLL=1 (make watch)"

all: $(BUILD_DIRS) ## build every chapter, solution and exercise into build/

common: ## build common/ (net, buf, tools, faults shim)
	$(Q)$(MAKE) --no-print-directory -C common

$(BUILD_DIRS): common
	$(Q)$(MAKE) --no-print-directory -C $@ QUIET_WHERE=$(if $(V),,1)

# Under `sudo make setup`, the packages need root but the build must belong to
# the learner, or their next `make test` could not write to build/.
setup: deps ## install missing system packages (sudo when not root), then build everything
	$(Q)if [ "$$(id -u)" = 0 ] && [ -n "$${SUDO_USER:-}" ] && [ "$$SUDO_USER" != root ]; then \
	    sudo -u "$$SUDO_USER" $(MAKE) --no-print-directory all; \
	else \
	    $(MAKE) --no-print-directory all; \
	fi

deps: ## install the system packages the course needs (apt, dnf or brew)
	$(Q)$(RUN) $(SCRIPTS)/deps.sh

doctor: ## report each dependency, the kernel, and whether io_uring is allowed here
	$(Q)$(RUN) $(SCRIPTS)/doctor.sh

test: common $(TEST_DIRS) ## run every chapter's tests (CH=03 for one chapter, CH=suite for every echo server's shared suite, FILTER= for bats --filter)
	$(Q)$(RUN) $(SCRIPTS)/run-tests.sh $(CH)

test-long: all ## the long tests make test leaves out (mutants, the echo suite under the faults shim, the book and README checks)
	$(Q)$(RUN) LONG=1 $(SCRIPTS)/run-tests.sh $(CH)

ex: ## test your copy of an exercise: make ex EX=03-nonblocking/poll-echo [IMPL=solutions]
	$(Q)$(RUN) $(SCRIPTS)/ex.sh "$(EX)" "$(or $(IMPL),exercises)"

watch: ## test your copy again each time you save a file of it (no EX=: the next unfinished one; POLL=1: poll, not inotify)
	$(Q)$(RUN) $(SCRIPTS)/watch.sh "$(EX)"

hint: ## show the next hint for an exercise: make hint EX=03-nonblocking/poll-echo
	$(Q)$(RUN) $(SCRIPTS)/hint.sh "$(EX)"

progress: ## every exercise by chapter, with its kind, level and status (done / failing / not started), and the next one
	$(Q)$(RUN) $(SCRIPTS)/progress.sh

grade: ## score your exercises for a classroom: warm-up 1, core 2, challenge 3 points; a table, "grade: N/M" and build/grade/junit.xml (CH=NN: one chapter; EX=...: one exercise, exit 0 when it passes)
	$(Q)$(RUN) $(SCRIPTS)/grade.sh "$(CH)" "$(EX)"

reset: ## put an exercise back as shipped, keeping your copy in .progress/reset/: make reset EX=...
	$(Q)$(RUN) $(SCRIPTS)/reset.sh "$(EX)"

solution: ## show an exercise's reference once your copy passes its tests (FORCE=1: at once): make solution EX=...
	$(Q)$(RUN) $(SCRIPTS)/solution.sh "$(EX)"

exercises: ## generate exercises/ anew from their sources (the chapters' files and solutions/); refuses while you have work there
	$(Q)$(RUN) $(SCRIPTS)/gen-exercises.sh solutions exercises

suite: ## link tests/NN-slug/suite-*.bats (the shared echo suite) for every server of common/servers.txt
	$(Q)$(RUN) $(SCRIPTS)/suite.sh

snippets: ## rewrite the code excerpts in the READMEs from the source files
	$(Q)$(RUN) $(SCRIPTS)/snippets.sh --fix

book: ## the book, HTML and EPUB, from the READMEs into build/book/ (pandoc, graphviz); a trace picture whose server changed is drawn again first
	$(Q)$(RUN) common/tools/trace/trace.sh --redraw-stale
	$(Q)$(RUN) $(SCRIPTS)/book.sh

bench: ## every echo server side by side, into build/bench/ (chapter 14; BENCH=full: the long run)
	$(Q)$(RUN) BENCH=$(or $(BENCH),quick) chapters/14-c10k/bench.sh

bench-check: ## compare the last make bench with chapter 14's baseline (ratios between servers)
	$(Q)$(RUN) chapters/14-c10k/bench-check.sh

trace: common $(CHAPTER_DIRS) ## a timeline of every system call of a server's threads under a small load: make trace S=NAME[,NAME...] (build/trace/)
	$(Q)$(RUN) common/tools/trace/trace.sh "$(S)"

trace-figures: common $(CHAPTER_DIRS) ## draw again the chapters' trace pictures (chapters/NN-slug/figures/trace-*.svg; S=NAME,...: only those)
	$(Q)$(RUN) common/tools/trace/trace.sh --figures $(S)

lint: ## clang-format check and cppcheck over every C file
	$(Q)$(RUN) $(SCRIPTS)/lint.sh

format: ## reformat every C file in place with clang-format
	$(Q)$(RUN) $(SCRIPTS)/lint.sh --fix

clean: ## remove build/ (every build, sanitizer ones included)
	rm -rf build
