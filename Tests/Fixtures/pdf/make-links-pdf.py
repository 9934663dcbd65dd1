import sys
objs = {}
objs[1] = b"<< /Type /Catalog /Pages 2 0 R /Outlines 9 0 R >>"
objs[2] = b"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 /MediaBox [0 0 200 200] >>"
UNTYPED = "--untyped" in sys.argv  # page 3 without /Type /Page: isolation must not rely on /Type

def page(content, annots=b"", typed=True):
    kind = b"/Type /Page " if typed else b""
    return b"<< " + kind + b"/Parent 2 0 R /Contents " + str(content).encode() + b" 0 R " + annots + b">>"
# A name that is not UTF-8 (#e9 is one byte), a graphics state the content uses: copied byte for byte.
objs[3] = page(6, b"/Annots [<< /Type /Annot /Subtype /Link /Rect [0 0 50 50] /Dest [5 0 R /Fit] >>] /Resources << /ExtGState << /Caf#e9 << /CA 1 >> >> >> ")
objs[4] = page(7)
objs[5] = page(8, typed=not UNTYPED)
def stream(text):
    return b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream"
objs[6] = stream(b"/Caf#e9 gs BT (PAGE-ONE-TEXT) Tj ET")
objs[7] = stream(b"BT (SECRET-PAGE-TWO) Tj ET")
objs[8] = stream(b"BT (SECRET-PAGE-THREE) Tj ET")
objs[9] = b"<< /Type /Outlines /First 10 0 R /Last 10 0 R /Count 1 >>"
objs[10] = b"<< /Title (Three) /Parent 9 0 R /Dest [5 0 R /Fit] >>"
out = bytearray(b"%PDF-1.7\n")
offsets = {}
for i in sorted(objs):
    offsets[i] = len(out)
    out += str(i).encode() + b" 0 obj\n" + objs[i] + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 " + str(len(objs)+1).encode() + b"\n0000000000 65535 f \n"
for i in sorted(objs): out += b"%010d 00000 n \n" % offsets[i]
out += b"trailer\n<< /Size " + str(len(objs)+1).encode() + b" /Root 1 0 R >>\nstartxref\n" + str(xref).encode() + b"\n%%EOF\n"
open(sys.argv[1],"wb").write(out)
