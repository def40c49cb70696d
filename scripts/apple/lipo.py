#!/usr/bin/env python3
"""A universal (fat) Mach-O from thin ones: what `lipo -create` does.

    lipo.py OUT THIN...

The toolchain here has no lipo. The format is Apple's <mach-o/fat.h>: a
big-endian header (0xcafebabe, the number of slices), then per slice its
CPU type and subtype (copied from the slice's own header), file offset,
size and alignment (2^14 for arm64, 2^12 otherwise, as lipo chooses), then
the slices at those offsets. Each slice keeps its own code signature.
"""
import struct, sys

out, thins = sys.argv[1], sys.argv[2:]
slices = []
for path in thins:
    data = open(path, 'rb').read()
    magic, cputype, cpusubtype = struct.unpack('<III', data[:12])
    if magic != 0xfeedfacf:
        sys.exit(f'{path}: not a thin 64-bit Mach-O (magic {magic:#x})')
    align = 14 if cputype == 0x0100000c else 12   # CPU_TYPE_ARM64
    slices.append((cputype, cpusubtype, align, data))
if len({s[0] for s in slices}) != len(slices):
    sys.exit('two slices have the same CPU type')
slices.sort(key=lambda s: s[0])          # x86_64 (0x01000007) before arm64, as lipo orders them
header = struct.pack('>II', 0xcafebabe, len(slices))
offset = len(header) + 20 * len(slices)
entries, body = b'', b''
for cputype, cpusubtype, align, data in slices:
    start = -(-offset // (1 << align)) * (1 << align)
    body += b'\0' * (start - offset) + data
    entries += struct.pack('>iiIII', cputype, cpusubtype, start, len(data), align)
    offset = start + len(data)
with open(out, 'wb') as f:
    f.write(header + entries + body)
print(f'lipo: {out}: {len(slices)} slices, {offset} bytes')
