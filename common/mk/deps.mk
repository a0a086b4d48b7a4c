# common/mk/deps.mk: the header dependencies of every object in $(OUT),
# for prog.mk and common/win/mingw.mk (include it after setting OUT).
#
# Each compile writes NAME.d beside NAME.o (-MMD -MP), sources in
# subfolders included (cio/cio_kqueue.c -> $(OUT)/cio/cio_kqueue.d):
# without them an object is not rebuilt when a header it uses changes, and
# links against a struct of the old layout.
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
