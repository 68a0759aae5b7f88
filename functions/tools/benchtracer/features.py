#!/usr/bin/python3
"""Start points of the real clips of `make bench-tracer`: the N strongest
Shi-Tomasi corners (cv2.goodFeaturesToTrack, quality 0.01, at least
MIN_DISTANCE px apart, block 7) of a clip's first frame, at least BORDER px
inside it, printed as JSON [[x, y], ...] (pixel centers).

usage: features.py FRAMES W H N_POINTS MIN_DISTANCE BORDER
"""
import json
import sys

import cv2
import numpy as np


def main():
    path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    n, dist, border = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    first = np.fromfile(path, dtype=np.uint8, count=w * h).reshape(h, w)
    mask = np.zeros_like(first)
    mask[border:h - border, border:w - border] = 255
    pts = cv2.goodFeaturesToTrack(first, n, 0.01, dist, mask=mask, blockSize=7)
    json.dump([[float(x), float(y)] for x, y in pts.reshape(-1, 2)], sys.stdout)


if __name__ == "__main__":
    main()
