# SPDX-License-Identifier: MIT
# Turns IN (a text file) into OUT, a C file defining `const char NAME[]`.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* generated from ${IN} by embed.cmake */\nconst char ${NAME}[] = {\n${bytes}0x00 };\n")
