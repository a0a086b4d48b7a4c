# common/mk/dotnet.mk: build a chapter's C# companion programs with the .NET SDK.
#
# A chapter Makefile lists them after its C programs:
#
#     PROGS := echo-epoll-et ...
#     DOTNET_PROGS := echo-dotnet-async echo-dotnet-saea
#     include ../../common/mk/prog.mk
#     include ../../common/mk/dotnet.mk
#
# Each NAME is the folder dotnet/NAME/ beside the Makefile, holding
# NAME.csproj (which imports common/dotnet/Course.props) and its .cs files,
# and perhaps a project it references in a subfolder. `dotnet build
# --artifacts-path` puts each project's output in its own folder under
# build/<the folder>/dotnet/NAME/ (bin/PROJECT/release/, obj/PROJECT/); the
# apphost is linked from build/<the folder>/NAME, so a C# program runs like
# the C ones: build/chapters/05-epoll-edge/echo-dotnet-async -p 0.
#
# The build is offline and leaves nothing outside build/: no package source
# (common/dotnet/nuget.config clears them; the programs use the framework
# alone), HOME, DOTNET_CLI_HOME and TMPDIR in build/, no build server or
# MSBuild node left running afterwards. Make decides what is out of date
# (the program's .cs and .csproj files, common/dotnet/ and this file), so a
# second `make` does not start dotnet at all.
#
# Without the SDK (no dotnet on PATH, or no SDK 8 or newer behind it), or in
# a sanitizer build (SAN=..., which instruments C code only), the programs
# are skipped with one line, and their tests skip saying why (require_dotnet
# in tests/helpers/common.bash). DOTNET=/path/to/dotnet picks another SDK.

ifndef COURSE_DOTNET_MK
COURSE_DOTNET_MK := 1

DOTNET_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
include $(dir $(DOTNET_MK))config.mk

DOTNET ?= dotnet
DOTNET_HERE := $(abspath $(CURDIR))
DOTNET_REL := $(patsubst $(TOP)/%,%,$(DOTNET_HERE))
DOTNET_OUT := $(BUILD)/$(DOTNET_REL)
# A program is out of date when its sources, common/dotnet/ or these rules change.
DOTNET_COMMON := $(wildcard $(TOP)/common/dotnet/*) $(DOTNET_MK)

# The newest SDK's major version (8, 10...), empty without one, read without
# starting the SDK itself: `dotnet --list-sdks` is answered by the native
# host, in a few milliseconds.
DOTNET_PATH := $(shell command -v $(DOTNET) 2>/dev/null)
DOTNET_MAJOR := $(if $(DOTNET_PATH),$(shell $(DOTNET) --list-sdks 2>/dev/null | sed -n 's/^\([0-9][0-9]*\)\..*/\1/p' | sort -n | tail -n 1))

# Everything the SDK would write under HOME or in /tmp goes here instead:
# the first-run sentinels, NuGet's own settings, scratch folder and (never
# used) package folder, MSBuild's temporary files. A CI account or a learner
# with a read-only or fresh HOME builds the same way, and two accounts on one
# machine do not meet in /tmp (NuGet's /tmp/NuGetScratch<user> belongs to
# whoever made it first).
DOTNET_HOME := $(BUILD)/dotnet-home
DOTNET_ENV := HOME=$(DOTNET_HOME) DOTNET_CLI_HOME=$(DOTNET_HOME) TMPDIR=$(DOTNET_HOME)/tmp \
    NUGET_PACKAGES=$(DOTNET_HOME)/packages NUGET_SCRATCH=$(DOTNET_HOME)/tmp/NuGetScratch \
    DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
    DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1 DOTNET_GENERATE_ASPNET_CERTIFICATE=false \
    DOTNET_ADD_GLOBAL_TOOLS_TO_PATH=false DOTNET_CLI_USE_MSBUILD_SERVER=0 \
    MSBUILDDISABLENODEREUSE=1 MSBUILDTERMINALLOGGER=off

# -nodeReuse:false and UseSharedCompilation=false: no MSBuild node and no
# compiler server (VBCSCompiler) stays behind for minutes after the build;
# the test runner counts a process left running as a failure. Release: the
# programs are measured beside optimised C. The output (dotnet build prints
# its summary even when told to be quiet) goes to build.log beside the
# program: make shows its warnings, or all of it when the build fails.
DOTNET_BUILD = $(DOTNET_ENV) $(DOTNET) build -nologo -c Release -v:q \
    -nodeReuse:false -p:UseSharedCompilation=false \
    -p:RestoreConfigFile=$(TOP)/common/dotnet/nuget.config \
    -p:TargetFramework=net$(DOTNET_MAJOR).0 \
    $(if $(filter 1,$(WERROR)),-p:TreatWarningsAsErrors=true)

DOTNET_LINKS := $(addprefix $(DOTNET_OUT)/,$(DOTNET_PROGS))

.PHONY: dotnet
all: dotnet

ifneq ($(strip $(SAN)),)
dotnet:
	@echo "skipping the C# programs of $(DOTNET_REL) ($(DOTNET_PROGS)): SAN=$(SAN) instruments C code only; they are built by plain make"
else ifeq ($(DOTNET_PATH),)
dotnet:
	@echo "skipping the C# programs of $(DOTNET_REL) ($(DOTNET_PROGS)): the .NET SDK (dotnet, 8 or newer) is not installed; make doctor says how to get it"
else ifeq ($(shell [ "$(DOTNET_MAJOR)" -ge 8 ] 2>/dev/null && echo new),)
dotnet:
	@echo "skipping the C# programs of $(DOTNET_REL) ($(DOTNET_PROGS)): they need the .NET SDK 8 or newer, and $(DOTNET) has $(if $(DOTNET_MAJOR),SDK $(DOTNET_MAJOR),no SDK); make doctor says how to get it"
else
dotnet: $(DOTNET_LINKS)
	@$(if $(QUIET_WHERE),true,echo "built $(DOTNET_REL) (C#): $(DOTNET_PROGS) -> $(patsubst $(TOP)/%,%,$(DOTNET_OUT))/")

# NAME: the apphost in dotnet/NAME/, linked from the chapter's build folder.
# dotnet build leaves an unchanged apphost's time alone: touch it, so that
# make sees the program up to date.
define dotnet_rule
$(DOTNET_OUT)/$(1): $(wildcard $(DOTNET_HERE)/dotnet/$(1)/*.cs* $(DOTNET_HERE)/dotnet/$(1)/*/*.cs*) $(DOTNET_COMMON)
	@mkdir -p $(DOTNET_OUT)/dotnet/$(1) $(DOTNET_HOME)/tmp
	@$(if $(Q),echo "  DOTNET  $(DOTNET_REL)/dotnet/$(1)")
	$(Q)if $$(DOTNET_BUILD) --artifacts-path $(DOTNET_OUT)/dotnet/$(1) $(DOTNET_HERE)/dotnet/$(1)/$(1).csproj \
	    >$(DOTNET_OUT)/dotnet/$(1)/build.log 2>&1; then \
	    grep -E ': warning ' $(DOTNET_OUT)/dotnet/$(1)/build.log | sort -u || true; \
	else cat $(DOTNET_OUT)/dotnet/$(1)/build.log; exit 1; fi
	$(Q)touch $(DOTNET_OUT)/dotnet/$(1)/bin/$(1)/release/$(1) && ln -sfn dotnet/$(1)/bin/$(1)/release/$(1) $$@
endef
$(foreach p,$(DOTNET_PROGS),$(eval $(call dotnet_rule,$(p))))
endif

endif
