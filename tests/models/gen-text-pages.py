#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""PP-OCR's int8 calibration pages: text lines rendered into greyscale PNGs.

    gen-text-pages.py OUTDIR COUNT

writes OUTDIR/page-<i>.png, i = 1..COUNT, never page.png (the test image).
The text is the licences Debian ships in /usr/share/common-licenses (the
GPL, LGPL, Apache, MPL and Artistic licence texts, whose own terms allow
verbatim copies), set in DejaVu (fonts-dejavu-core, under the Bitstream
Vera / Arev fonts licence, free to use and embed) by Pillow (python3-pil).
Each page varies font, size, ink and paper the way printed pages do, so
the calibration sees the value ranges real text gives; all are page.png's
size, so det's inputs share one shape (calib-shape.py).  Everything is a
function of i alone, so the pages are the same on every build.
"""
import os
import random
import sys
import textwrap

from PIL import Image, ImageDraw, ImageFont

LICENCES = ('GPL-3', 'GPL-2', 'LGPL-2.1', 'Apache-2.0', 'MPL-2.0', 'Artistic')
FONT_DIR = '/usr/share/fonts/truetype/dejavu'
FONTS = ('DejaVuSans.ttf', 'DejaVuSerif.ttf', 'DejaVuSansMono.ttf',
         'DejaVuSansCondensed.ttf', 'DejaVuSerif-Bold.ttf', 'DejaVuSans-Oblique.ttf')
# page.png's own lines are about 12 px high; the pages here range around
# that, at its size.
SIZES = (11, 12, 13, 14, 16)
WIDTH, HEIGHT = 384, 191


def words(name):
    with open(os.path.join('/usr/share/common-licenses', name), encoding='utf-8') as f:
        return ' '.join(f.read().split())


def page(i, out):
    rnd = random.Random(i)
    text = words(LICENCES[i % len(LICENCES)])
    font_px = SIZES[rnd.randrange(len(SIZES))]
    font = ImageFont.truetype(os.path.join(FONT_DIR, FONTS[i % len(FONTS)]), font_px)
    width, height = WIDTH, HEIGHT
    margin = rnd.randint(8, 16)
    line_h = int(font_px * rnd.uniform(1.5, 2.0))
    # characters per line from the font's own advance, so lines fill the page
    per_line = max(8, int((width - 2 * margin) / font.getlength('n')))
    start = rnd.randrange(max(1, len(text) - 4000))
    lines = textwrap.wrap(text[start:start + 4000], per_line)
    lines = lines[1:(height - 2 * margin) // line_h + 1]
    paper = rnd.randint(170, 255)
    ink = rnd.randint(0, 70)
    img = Image.new('L', (width, height), paper)
    draw = ImageDraw.Draw(img)
    # uneven lighting, as on a photographed page
    for x in range(width):
        shade = int(paper - 30 * (x / width) * rnd.random() * 0.2)
        draw.line([(x, 0), (x, height)], fill=max(ink + 60, shade))
    for k, line in enumerate(lines):
        draw.text((margin, margin + k * line_h), line, fill=ink, font=font)
    img.save(out)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: gen-text-pages.py OUTDIR COUNT')
    os.makedirs(sys.argv[1], exist_ok=True)
    for i in range(1, int(sys.argv[2]) + 1):
        page(i, os.path.join(sys.argv[1], f'page-{i}.png'))


if __name__ == '__main__':
    main()
