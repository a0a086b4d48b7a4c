@echo off
rem build.bat: build chapter 09 natively on Windows, into this folder.
rem
rem   MSVC, from a "Developer Command Prompt for Visual Studio" (2019 16.8 or later, for /std:c11):
rem       build.bat
rem   MinGW-w64 (MSYS2, w64devkit...), with gcc on PATH:
rem       build.bat gcc
rem
rem Then: echo-iocp.exe -p 0 -w 2    and    iocp-read.exe README.md
rem (CMakeLists.txt does the same for CMake users.)
setlocal
cd /d "%~dp0"
rem win.c, the Windows twin of common/net.c, is shared with chapter 11
set W=..\..\common\win

if /i "%1"=="gcc" goto gcc

cl /nologo /std:c11 /W4 /O2 /D_CRT_SECURE_NO_WARNINGS /I%W% iocp-read.c %W%\win.c /Fe:iocp-read.exe ws2_32.lib mswsock.lib || exit /b 1
cl /nologo /std:c11 /W4 /O2 /D_CRT_SECURE_NO_WARNINGS /I%W% echo-iocp.c conn.c %W%\win.c /Fe:echo-iocp.exe ws2_32.lib mswsock.lib || exit /b 1
goto done

:gcc
gcc -std=c11 -Wall -Wextra -O2 -I%W% -o iocp-read.exe iocp-read.c %W%\win.c -lws2_32 -lmswsock || exit /b 1
gcc -std=c11 -Wall -Wextra -O2 -I%W% -o echo-iocp.exe echo-iocp.c conn.c %W%\win.c -lws2_32 -lmswsock || exit /b 1

:done
echo built iocp-read.exe and echo-iocp.exe
