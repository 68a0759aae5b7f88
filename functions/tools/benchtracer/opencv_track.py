#!/usr/bin/python3
"""The OpenCV anchors of `make bench-tracer`.

Tracks the points of a clip with OpenCV (Debian's python3-opencv) and prints
one JSON object: {"points": [[[x, y] or null per marker] per frame], "fps": N,
"params": "..."}. Frame 0 gets the start points. Coordinates are pixel
centers (the top-left pixel's center is 0, 0), as in the Go tracker.

usage: opencv_track.py CLIP START_JSON METHOD TEMPLATE_RADIUS SEARCH_RADIUS MIN_SCORE
  METHOD "template": cv2.matchTemplate with TM_CCOEFF_NORMED of the frame-0
    template (fixed) in a window of +-SEARCH_RADIUS around the last position,
    sub-pixel by a parabola through the 3x3 scores in x and in y; a best
    score below MIN_SCORE is lost (null), and the next frame searches around
    the last position seen.
  METHOD "lk": cv2.calcOpticalFlowPyrLK frame to frame (pyramidal
    Lucas-Kanade, window 2*TEMPLATE_RADIUS+1, 3 levels); a point whose status
    is 0 is lost for good (LK has no re-detection).
Timing covers decoding (cv2.VideoCapture), the gray conversion and tracking.
"""
import json
import sys
import time

import cv2
import numpy as np


def parabola(l, c, r):
    den = l - 2 * c + r
    if den >= 0:
        return 0.0
    return max(-0.5, min(0.5, 0.5 * (l - r) / den))


def track_template(cap, starts, r, rad, min_score):
    ok, frame = cap.read()
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    h, w = gray.shape
    # Templates at the start points (rounded: OpenCV cuts whole pixels).
    tpls, last = [], []
    for x, y in starts:
        cx, cy = int(round(x)), int(round(y))
        tpls.append(gray[cy - r:cy + r + 1, cx - r:cx + r + 1].copy())
        last.append((float(cx), float(cy)))
    out = [[[x, y] for x, y in starts]]
    n = 1
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        n += 1
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        pts = []
        for k, t in enumerate(tpls):
            cx, cy = int(round(last[k][0])), int(round(last[k][1]))
            x0, y0 = max(cx - rad - r - 1, 0), max(cy - rad - r - 1, 0)
            x1, y1 = min(cx + rad + r + 2, w), min(cy + rad + r + 2, h)
            win = gray[y0:y1, x0:x1]
            if win.shape[0] < t.shape[0] + 2 or win.shape[1] < t.shape[1] + 2:
                pts.append(None)
                continue
            res = cv2.matchTemplate(win, t, cv2.TM_CCOEFF_NORMED)
            _, score, _, (bx, by) = cv2.minMaxLoc(res)
            if score < min_score:
                pts.append(None)
                continue
            dx = dy = 0.0
            if 0 < bx < res.shape[1] - 1:
                dx = parabola(res[by, bx - 1], res[by, bx], res[by, bx + 1])
            if 0 < by < res.shape[0] - 1:
                dy = parabola(res[by - 1, bx], res[by, bx], res[by + 1, bx])
            x, y = x0 + bx + r + dx, y0 + by + r + dy
            last[k] = (x, y)
            pts.append([float(x), float(y)])
        out.append(pts)
    return out, n


def track_lk(cap, starts, r):
    ok, frame = cap.read()
    prev = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    p = np.array(starts, dtype=np.float32).reshape(-1, 1, 2)
    alive = [True] * len(starts)
    out = [[[x, y] for x, y in starts]]
    n = 1
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        n += 1
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        q, st, _ = cv2.calcOpticalFlowPyrLK(prev, gray, p, None, winSize=(2 * r + 1, 2 * r + 1), maxLevel=3, criteria=crit)
        pts = []
        for k in range(len(starts)):
            if alive[k] and st[k][0] == 1:
                pts.append([float(q[k][0][0]), float(q[k][0][1])])
            else:
                alive[k] = False
                pts.append(None)
        out.append(pts)
        p, prev = q, gray
    return out, n


def main():
    clip, starts_path, method = sys.argv[1], sys.argv[2], sys.argv[3]
    r, rad, min_score = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    with open(starts_path) as f:
        starts = json.load(f)
    cv2.setNumThreads(2)
    t0 = time.perf_counter()
    cap = cv2.VideoCapture(clip)
    if method == "template":
        pts, n = track_template(cap, starts, r, rad, min_score)
        params = "matchTemplate TM_CCOEFF_NORMED, fixed frame-0 template %dx%d, search +-%d px around the last position, parabola sub-pixel fit, lost below %.2f" % (2 * r + 1, 2 * r + 1, rad, min_score)
    elif method == "lk":
        pts, n = track_lk(cap, starts, r)
        params = "calcOpticalFlowPyrLK window %dx%d, 3 pyramid levels, 30 iterations / eps 0.01, lost when status is 0" % (2 * r + 1, 2 * r + 1)
    else:
        sys.exit("unknown method " + method)
    dt = time.perf_counter() - t0
    json.dump({"points": pts, "fps": n / dt, "params": params}, sys.stdout)


if __name__ == "__main__":
    main()
