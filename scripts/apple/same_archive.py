#!/usr/bin/env python3
"""Whether two static libraries of Mach-O objects hold the same code.

    same_archive.py A.a B.a        exit 0 when they do; prints the first difference

Members are compared in order, byte for byte, except one section: Swift's
__swift_modhash, a 16-byte hash the compiler stores for its own incremental
builds, which changes with the absolute paths of a build (the checkout, the
module cache) although the code does not. Nothing reads it at link or run
time. Archive headers are compared by member name only (llvm-ar D writes no
dates, owners or modes).
"""
import struct, subprocess, sys, tempfile, os

def zero_modhash(data):
    data = bytearray(data)
    if struct.unpack_from('<I', data, 0)[0] != 0xfeedfacf:
        return bytes(data)
    ncmds = struct.unpack_from('<I', data, 16)[0]
    off = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from('<II', data, off)
        if cmd == 0x19:  # LC_SEGMENT_64
            nsects = struct.unpack_from('<I', data, off + 64)[0]
            for i in range(nsects):
                s = off + 72 + 80 * i
                name = data[s:s + 16].rstrip(b'\0')
                ssize, soff = struct.unpack_from('<QI', data, s + 40)
                if name == b'__swift_modhash':
                    data[soff:soff + ssize] = b'\0' * ssize
        off += size
    return bytes(data)

def members(path):
    d = tempfile.mkdtemp()
    names = subprocess.run(['llvm-ar', 't', path], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(['llvm-ar', 'x', os.path.abspath(path)], cwd=d, check=True)
    return [(n, zero_modhash(open(os.path.join(d, n), 'rb').read())) for n in names]

a, b = members(sys.argv[1]), members(sys.argv[2])
if [n for n, _ in a] != [n for n, _ in b]:
    sys.exit(f'members differ: {[n for n, _ in a]} vs {[n for n, _ in b]}')
for (n, x), (_, y) in zip(a, b):
    if x != y:
        sys.exit(f'{n} differs')
print(f'same code: {len(a)} members')
