"""ICU script codes (`UScriptCode`) of every Unicode code point, for
`jaxtape.strings.unicode_script`. Layer L2 (`structured/`), no imports.

A table of ranges: each token `delta.code` (base 36) says the code points
from the previous start plus `delta` on have the script `code`, up to the
next token's start. Generated from TF 2.21's own answer (ICU's
`uscript_getScript`, `tf.strings.unicode_script` of every code point), so
the values are TF's exactly, Unicode version included: code points that
version leaves unassigned are Unknown (103).
"""

from __future__ import annotations

import bisect

_TABLE = (
    "0.0 1t.p q.0 6.p q.0 1b.p 1.0 f.p 1.0 5.p n.0 1.p v.0 1.p ch.0 13.p 5.0 5.5 2.0 "
    "k.1 34.e 4.0 1.e 3.2v 2.e 4.0 1.e 1.2v 4.e 1.0 1.e 1.0 1.e 3.2v 1.e 1.2v 1.e "
    "k.2v 1.e 1r.7 e.e g.8 3p.1 2.8 4p.2v 1.3 12.2v 2.3 1e.2v 2.3 3.2v 1.j 1j.2v 8.j "
    "r.2v 4.j 6.2v b.2 5.0 1.2 6.0 1.2 e.0 1.2 1.2v 1.2 1.0 1.2 w.0 1.2 a.1 b.2 q.1 "
    "1.2 30.0 1.2 y.y e.2v 1.y 1o.2v 2.y 3.2 1c.11 1e.2v e.2f 1n.2v 2.2f 3.3i 1a.2v "
    "2.3i f.2v 1.2c s.2v 2.2c 1.2v 1.y b.2v 1h.2 l.2v 1.2 i.2v b.2 f.0 1.2 t.a 29.1 "
    "4.a f.0 2.a q.4 4.2v 1.4 8.2v 2.4 2.2v 2.4 m.2v 1.4 7.2v 1.4 1.2v 3.4 4.2v 2.4 "
    "9.2v 2.4 2.2v 2.4 4.2v 8.4 1.2v 4.4 2.2v 1.4 5.2v 2.4 p.2v 2.g 3.2v 1.g 6.2v 4.g "
    "2.2v 2.g m.2v 1.g 7.2v 1.g 2.2v 1.g 2.2v 1.g 2.2v 2.g 1.2v 1.g 5.2v 4.g 2.2v 2.g "
    "3.2v 3.g 1.2v 7.g 4.2v 1.g 1.2v 7.g h.2v a.f 3.2v 1.f 9.2v 1.f 3.2v 1.f m.2v 1.f "
    "7.2v 1.f 2.2v 1.f 5.2v 2.f a.2v 1.f 3.2v 1.f 3.2v 2.f 1.2v f.f 4.2v 2.f c.2v 7.f "
    "7.2v 1.v 3.2v 1.v 8.2v 2.v 2.2v 2.v m.2v 1.v 7.2v 1.v 2.2v 1.v 5.2v 2.v 9.2v 2.v "
    "2.2v 2.v 3.2v 7.v 3.2v 4.v 2.2v 1.v 5.2v 2.v i.2v a.z 2.2v 1.z 6.2v 3.z 3.2v 1.z "
    "4.2v 3.z 2.2v 1.z 1.2v 1.z 2.2v 3.z 2.2v 3.z 3.2v 3.z c.2v 4.z 5.2v 3.z 3.2v 1.z "
    "4.2v 2.z 1.2v 6.z 1.2v e.z l.2v 5.10 d.2v 1.10 3.2v 1.10 n.2v 1.10 g.2v 3.10 "
    "8.2v 1.10 3.2v 1.10 4.2v 7.10 2.2v 1.10 3.2v 5.10 4.2v 2.10 a.2v 7.10 9.l d.2v "
    "1.l 3.2v 1.l n.2v 1.l a.2v 1.l 5.2v 2.l 9.2v 1.l 3.2v 1.l 4.2v 7.l 2.2v 7.l 1.2v "
    "1.l 4.2v 2.l a.2v 1.l 2.2v d.q d.2v 1.q 3.2v 1.q 1f.2v 1.q 3.2v 1.q 6.2v 4.q "
    "g.2v 2.q q.2v 1.x 3.2v 1.x i.2v 3.x o.2v 1.x 9.2v 1.x 1.2v 2.x 7.2v 3.x 1.2v 4.x "
    "6.2v 1.x 1.2v 1.x 8.2v 6.x a.2v 2.x 3.2v c.12 1m.2v 4.0 1.12 s.2v 11.o 2.2v 1.o "
    "1.2v 1.o 5.2v 1.o o.2v 1.o 1.2v 1.o n.2v 2.o 5.2v 1.o 1.2v 1.o 6.2v 2.o a.2v 2.o "
    "4.2v w.13 20.2v 1.13 10.2v 4.13 13.2v 1.13 10.2v 1.13 f.2v 1.13 7.0 4.13 2.2v "
    "11.s 4g.c 12.2v 1.c 1.2v 5.c 1.2v 2.c 17.0 1.c 4.i 74.b 21.2v 1.b 4.2v 2.b 7.2v "
    "1.b 1.2v 1.b 4.2v 2.b 15.2v 1.b 4.2v 2.b x.2v 1.b 4.2v 2.b 7.2v 1.b 1.2v 1.b "
    "4.2v 2.b f.2v 1.b 1l.2v 1.b 4.2v 2.b 1v.2v 2.b w.2v 3.b q.2v 6.6 2e.2v 2.6 6.2v "
    "2.14 hs.t t.2v 3.w 23.0 3.w b.2v 7.16 d.2v 1.16 7.2v b.17 l.0 2.2v 9.18 k.2v "
    "c.19 d.2v 1.19 3.2v 1.19 2.2v c.n 2m.2v 2.n a.2v 6.n a.2v 6.r 2.0 2.r 1.0 1.r "
    "9.2v 1.r a.2v 6.r 2h.2v 7.r 17.2v 5.14 1y.2v a.1c v.2v 1.1c c.2v 4.1c c.2v 4.1c "
    "1.2v 3.1c c.1g u.2v 2.1g 5.2v b.1n 18.2v 4.1n q.2v 6.1n b.2v 3.1n 2.n w.1j s.2v "
    "2.1j 2.2y 1r.2v 1.2y t.2v 2.2y b.2v 6.2y a.2v 6.2y e.2v 2.1 h.2v 1r.1q 24.2v "
    "4.1q 19.2v 3.35 1s.1r 1g.2v 8.1r 4.2a 1k.2v 3.2a f.2v 3.2a 3.31 1c.8 9.2v 7.c "
    "17.2v 2.c 3.35 8.2v 8.1 3.0 1.1 d.0 1.1 7.0 4.1 1.0 6.1 1.0 3.1 2.0 1.2v 5.p "
    "12.e 5.8 1.p 1d.e 5.p 4.e 5.p d.8 1.p 1y.e 1.1 1m.2v 1.1 5.p 74.e m.2v 2.e 6.2v "
    "2.e 12.2v 2.e 6.2v 2.e 8.2v 1.e 1.2v 1.e 1.2v 1.e 1.2v 1.e v.2v 2.e 1h.2v 1.e "
    "f.2v 1.e e.2v 2.e 6.2v 1.e j.2v 2.e 3.2v 1.e 9.2v 1.0 c.1 2.0 2f.2v 1.0 b.p 1.2v "
    "2.0 b.p 1.0 f.2v 1.p d.2v 3.0 w.2v g.1 x.2v f.0 12.e 1.0 3.p 2.0 6.p 1.0 r.p 1.0 "
    "h.p 15.0 3.2v 4.0 if.2v p.0 b.2v l.0 ps.1a 74.0 hg.2v 2.0 w.2v 1.0 2x.1k 1b.2v "
    "1.1k 1b.2v 1.p w.7 38.2v 5.7 7.c 12.2v 1.c 1.2v 5.c 1.2v 2.1o 1k.2v 7.1o 2.2v "
    "e.1o 1.b n.2v 9.b 7.2v 1.b 7.2v 1.b 7.2v 1.b 7.2v 1.b 7.2v 1.b 7.2v 1.b 7.2v 1.b "
    "7.2v 1.8 w.0 2b.2v 19.h q.2v 1.h 2h.2v c.h 5y.2v q.0 c.2v 4.0 5.h 1.0 1.h 1.0 "
    "p.h 9.1 4.i 2.0 8.h 4.0 4.2v 1.k 2e.2v 2.1 2.0 2.k 3.0 1.m 2i.0 2.m 3.2v 5.5 "
    "17.2v 1.i 2m.2v 1.0 g.5 w.0 10.2v c.m g.i v.2v 1.0 1s.i v.0 29.m 1b.0 1.m 2g.0 "
    "4o.h 534.0 1s.h g71.2v 3.15 wd.2v 3.15 1j.2v 9.3n 1c.2r 8c.2v k.8 2o.3m 2g.2v "
    "8.0 y.p 2u.0 3.p 1h.2v 2.p 9.2v 16.p b.1m 19.2v 3.0 a.2v 6.2i 1k.2v 8.33 1y.2v "
    "8.33 c.2v 6.a w.27 1a.0 1.27 1.32 10.2v b.32 1.i t.2v 3.26 26.2v 1.0 1.26 a.2v "
    "4.26 2.s v.2v 1.1u 1j.2v 9.1u e.2v 2.1u a.2v 2.1u 4.s w.3j 1v.2v o.3j 5.37 n.2v "
    "a.b 6.2v 2.b 6.2v 2.b 6.2v 9.b 7.2v 1.b 7.2v 1.p 17.0 1.p 9.e 1.p 4.0 2.2v 4.6 "
    "28.37 1a.2v 2.37 a.2v 6.i 8mc.2v c.i n.2v 4.i 1d.2v 6is.h a6.2v 2.h 2y.2v 12.p "
    "7.2v c.3 5.2v 5.j q.2v 1.j 5.2v 1.j 1.2v 1.j 2.2v 1.j 2.2v 1.j a.2 36.2v h.2 "
    "a3.0 2.2v g.2 1s.2v 2.2 1i.2v 14.2 e.2v 2.1 g.0 a.2v 6.1 e.8 2.0 z.2v 1.0 j.2v "
    "1.0 4.2v 4.2 5.2v 1.2 3r.2v 2.0 1.2v 1.0 w.p q.0 6.p q.0 b.m a.0 1.m 19.0 2.i "
    "v.2v 3.i 6.2v 2.i 6.2v 2.i 6.2v 2.i 3.2v 3.0 7.2v 1.0 7.2v a.0 5.2v 2.1d c.2v "
    "1.1d q.2v 1.1d j.2v 1.1d 2.2v 1.1d f.2v 2.1d e.2v y.1d 3f.2v 5.0 3.2v 4.0 19.2v "
    "3.0 9.e 27.2v 1.0 d.2v 3.e 1.2v 1b.0 19.1 1.2v 3m.2z t.2v 3.2w 1d.2v f.1 1.0 "
    "r.2v 4.u 10.2v 9.u 3.d r.2v 5.2h 17.2v 5.1h u.2v 1.1h 1.1p 10.2v 4.1p e.2v 16.9 "
    "28.1f 1c.1e u.2v 2.1e a.2v 6.4r 10.2v 4.4r 10.2v 4.3s 14.2v 8.4f 1g.2v b.4f 1.2v "
    "40.2b 8n.2v 9.2b m.2v a.2b 8.2v 48.1b 6.2v 2.1b 1.2v 1.1b 18.2v 1.1b 2.2v 3.1b "
    "1.2v 2.1b 1.38 m.2v 1.38 9.40 w.3z v.2v 8.3z 9.2v 1c.4i j.2v 1.4i 2.2v 5.4i 5.2j "
    "s.2v 3.2j 1.30 q.2v 5.30 1.2v 1s.2e w.3x o.2v 4.3x k.2v 2.3x 1a.1l 4.2v 1.1l "
    "2.2v 5.1l 8.2v 1.1l 3.2v 1.1l t.2v 2.1l 3.2v 4.1l a.2v 7.1l 9.2v 7.3p w.3y w.2v "
    "w.3d 13.2v 4.3d c.2v 9.39 1i.2v 3.39 7.3h m.2v 2.3h 8.3e j.2v 5.3e 8.3f i.2v "
    "7.3f 4.2v c.3f 7.2v 28.2g 21.2v 1j.24 1f.2v d.24 1f.2v 7.24 6.52 14.2v 8.52 a.2v "
    "86.2 v.2v 1.5c 16.2v 1.5c 3.2v 2.5c 2.2v 26.54 14.2v 8.53 16.2v 2e.59 s.2v k.55 "
    "n.2v 9.1t 26.2v 4.1t u.2v f.1t 1.3c 1u.2v b.3c 1.2v 2.48 p.2v 7.48 a.2v 6.3a "
    "1h.2v 1.3a i.2v 8.4g 13.2v 9.47 2o.2v 1.x k.2v b.4d i.2v 1.4d 18.2v 1t.4k 7.2v "
    "1.4k 1.2v 1.4k 4.2v 1.4k f.2v 1.4k b.2v 6.41 1n.2v 5.41 a.2v 6.3t 4.2v 1.3t 8.2v "
    "2.3t 2.2v 2.3t m.2v 1.3t 7.2v 1.3t 2.2v 1.3t 5.2v 1.1 1.3t 9.2v 2.3t 2.2v 2.3t "
    "3.2v 2.3t 1.2v 6.3t 1.2v 5.3t 7.2v 2.3t 7.2v 3.3t 5.2v 3v.4q 2k.2v 1.4q 5.2v "
    "u.4e 20.2v 8.4e a.2v 4m.4m 1i.2v 2.4m 12.2v y.4j 1x.2v b.4j a.2v 6.r d.2v j.49 "
    "1l.2v 7.49 a.2v 1i.4h r.2v 2.4h f.2v 4.4h g.2v 5c.4y 1o.2v 2s.42 2b.2v c.42 1.5a "
    "7.2v 2.5a 1.2v 2.5a 8.2v 1.5a 2.2v 1.5a u.2v 1.5a 2.2v 2.5a c.2v 9.5a a.2v 1y.57 "
    "8.2v 2.57 1a.2v 2.57 b.2v r.4x 20.2v 8.4w 2b.2v t.4l 1l.2v 7b.4o 9.2v 1.4o 19.2v "
    "1.4o e.2v a.4o t.2v 3.4p w.2v 2.4p m.2v 1.4p e.2v 21.4v 7.2v 1.4v 2.2v 1.4v "
    "18.2v 3.4v 1.2v 1.4v 2.2v 1.4v 9.2v 8.4v a.2v 6.4z 6.2v 1.4z 2.2v 1.4z 11.2v "
    "1.4z 2.2v 1.4z 6.2v 7.4z a.2v 8m.50 p.2v 53.3n 1.2v f.z 1e.2v d.z 1.2t pm.2v "
    "2u.2t 33.2v 1.2t 5.2v b.2t 5g.2v 24c.1z tr.2v 1.1z 9.2v 347.4c g7.2v 6nt.3m "
    "ft.2v 7.45 v.2v 1.45 a.2v 4.45 2.2v 2o.3q u.2v 2.3q 6.2v a.23 1y.2v a.23 a.2v "
    "1.23 7.2v 1.23 l.2v 5.23 j.2v j4.51 2j.2v 2t.2k 23.2v 4.2k 1l.2v 7.2k h.2v 1s.4a "
    "1.46 1.0 2.5b 1.2v b.h 2.2v e.4a 4qg.2v 8.4a lc.5b d2.2v 16.4a 9.2v 6wn.m 1.k "
    "7y.2v 1d.k 3.2v h.m 4.2v 8.46 b0.2v 1s4.3r 2z.2v 5.3r d.2v 3.3r 9.2v 7.3r a.2v "
    "2.3r 4.0 4.2v 3to.0 6u.2v a.0 13.2v 2.0 1q.1 3.0 h.1 8.0 2.1 7.0 u.1 4.0 1n.2v "
    "n.e 1y.2v 4a.0 k.2v c.0 2f.2v 9.0 p.2v 3r.0 2d.2v 1.0 1z.2v 1.0 2.2v 2.0 1.2v "
    "2.0 2.2v 2.0 4.2v 1.0 c.2v 1.0 1.2v 1.0 7.2v 1.0 1t.2v 1.0 4.2v 2.0 8.2v 1.0 "
    "7.2v 1.0 s.2v 1.0 4.2v 1.0 5.2v 1.0 1.2v 3.0 7.2v 1.0 9g.2v 2.0 84.2v 2.0 1e.34 "
    "i4.2v f.34 5.2v 1.34 f.2v 11s.1k 7.2v 1.1k h.2v 2.1k 7.2v 1.1k 2.2v 1.1k 5.2v "
    "5x.56 19.2v 3.56 e.2v 2.56 a.2v 4.56 2.2v a8.58 1m.2v 5.58 1.2v zk.3w 5h.2v 2.3w "
    "g.2v 15.4n 24.2v 4.4n a.2v 4.4n 2.2v lt.0 1w.2v 24.0 1p.2v 5e.2 4.2v 1.2 r.2v "
    "1.2 2.2v 1.2 1.2v 2.2 1.2v 1.2 a.2v 1.2 4.2v 1.2 1.2v 1.2 1.2v 6.2 1.2v 4.2 1.2v "
    "1.2 1.2v 1.2 1.2v 1.2 3.2v 1.2 2.2v 1.2 1.2v 2.2 1.2v 1.2 1.2v 1.2 1.2v 1.2 1.2v "
    "1.2 1.2v 1.2 2.2v 1.2 1.2v 2.2 4.2v 1.2 7.2v 1.2 4.2v 1.2 4.2v 1.2 1.2v 1.2 a.2v "
    "1.2 h.2v 5.2 3.2v 1.2 5.2v 1.2 h.2v 1g.2 2.2v 7i.0 18.2v 4.0 2s.2v c.0 f.2v 2.0 "
    "f.2v 1.0 f.2v 1.0 11.2v a.0 4u.2v 1k.0 q.k 1.0 2.2v d.0 18.2v 4.0 9.2v 7.0 2.2v "
    "e.0 6.2v 4a.0 rc.2v 8.0 d.2v 3.0 d.2v 3.0 38.2v c.0 2h.2v 7.0 c.2v k.0 c.2v 4.0 "
    "1k.2v 8.0 a.2v 6.0 14.2v 8.0 u.2v 2.0 2.2v 26.0 3d.2v 1.0 2a.2v 1.0 3r.2v c.0 "
    "e.2v 2.0 5.2v 3.0 3.2v 5.0 7.2v 9.0 p.2v 7.0 7.2v 9.0 3.2v d.0 7.2v 15.0 43.2v "
    "1.0 1j.2v 11.0 a.2v sm.h wym.2v y.h 379.2v b.h 66.2v 2.h 4g2.2v e.h 5rl.2v 2e7.h "
    "f2.2v 15u.h 3t7.2v fcfq.0 1.2v u.0 2o.2v 3k.1 6o.2v "
)
_starts: list[int] = []
_codes: list[int] = []


def script_of(c: int) -> int:
    """The ICU script code of code point `c` (-1 if `c` is not one)."""
    if not 0 <= c <= 0x10FFFF:
        return -1
    if not _starts:
        start = 0
        for token in _TABLE.split():
            delta, code = token.split(".")
            start += int(delta, 36)
            _starts.append(start)
            _codes.append(int(code, 36))
    return _codes[bisect.bisect_right(_starts, c) - 1]
