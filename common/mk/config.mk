# common/mk/config.mk: the one place where compiler flags and build folders live.
#
# Every Makefile in the course includes this file (through prog.mk), so a flag
# changed here changes it everywhere.
#
#   SAN=address,undefined   build with those sanitizers into build/san-address-undefined/
#   SAN=thread              ThreadSanitizer, into build/san-thread/
#   WERROR=1                turn warnings into errors (CI does this)
#   V=1                     show the full compiler commands

ifndef COURSE_CONFIG_MK
COURSE_CONFIG_MK := 1

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)

comma := ,
SAN ?=
ifeq ($(strip $(SAN)),)
BUILD ?= $(TOP)/build
else
BUILD ?= $(TOP)/build/san-$(subst $(comma),-,$(strip $(SAN)))
endif
export BUILD SAN

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -O2 -g
ifneq ($(strip $(SAN)),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDFLAGS_BASE += -fsanitize=$(SAN)
# UBSan only prints by default; a test must fail on undefined behaviour.
ifneq ($(filter undefined,$(subst $(comma), ,$(SAN))),)
CFLAGS_BASE += -fno-sanitize-recover=all
endif
endif
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

UNAME_S := $(shell uname -s)

endif
