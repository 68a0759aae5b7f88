#!/usr/bin/python3
"""The OpenCV anchors of `make bench-tracer`.

Tracks points through gray frames with OpenCV 4.6 (Debian's python3-opencv)
and prints one JSON object: {"points": [[[x, y] or null per marker] per
frame], "cpu": S, "params": "..."}. The frames are the very bytes the Go
tracker gets: a raw file of N frames of W x H 8-bit gray pixels, written by
benchtracer from one ffmpeg decode. Frame 0 gets the start points.
Coordinates are pixel centers (the top-left pixel's center is 0, 0), as in
the Go tracker. "cpu" is the process CPU time of tracking alone (decoding
and reading excluded), all threads.

usage: opencv_track.py FRAMES W H N START_JSON METHOD TEMPLATE_RADIUS SEARCH_RADIUS MIN_SCORE [reverse]
  reverse: the frames are taken last to first (the backward half of a
    forward-backward run, Kalal et al. 2010).
  METHOD "template": cv2.matchTemplate with TM_CCOEFF_NORMED of the frame-0
    template (fixed, cut by cv2.getRectSubPix at the exact sub-pixel start
    point) in a window of +-SEARCH_RADIUS around the last position,
    sub-pixel by a parabola through the scores in x and in y; a best score
    below MIN_SCORE is lost (null), and the next frame searches around the
    last position seen.
  METHOD "lk": cv2.calcOpticalFlowPyrLK frame to frame, set up as OpenCV's
    own lk_track.py sample does: pyramids, and a forward-backward check on
    every frame (a point tracked back to the previous frame must land within
    1 px of where it was); window 2*TEMPLATE_RADIUS+1, 3 pyramid levels. A
    point whose status is 0 or that fails the check is lost for good (LK
    has no re-detection).
  METHOD "lk-plain": the same PyrLK without the forward-backward check:
    a point is lost for good only when its status is 0.
  METHOD "csrt" / "kcf": cv2.TrackerCSRT / cv2.TrackerKCF (default
    parameters) on a box of the template's size around the point; the
    point moves with the box (start point plus the box's displacement); a
    failed update is lost for that frame.
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


def track_template(frames, starts, r, rad, min_score):
    h, w = frames[0].shape
    side = 2 * r + 1
    tpls = [cv2.getRectSubPix(frames[0], (side, side), (float(x), float(y))) for x, y in starts]
    last = [(float(x), float(y)) for x, y in starts]
    out = [[[x, y] for x, y in starts]]
    for gray in frames[1:]:
        pts = []
        for k, t in enumerate(tpls):
            cx, cy = int(round(last[k][0])), int(round(last[k][1]))
            x0, y0 = max(cx - rad - r - 1, 0), max(cy - rad - r - 1, 0)
            x1, y1 = min(cx + rad + r + 2, w), min(cy + rad + r + 2, h)
            win = gray[y0:y1, x0:x1]
            if win.shape[0] < side + 2 or win.shape[1] < side + 2:
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
    return out


def track_lk(frames, starts, r, check=True):
    p = np.array(starts, dtype=np.float32).reshape(-1, 1, 2)
    alive = [True] * len(starts)
    out = [[[x, y] for x, y in starts]]
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)
    lk = dict(winSize=(2 * r + 1, 2 * r + 1), maxLevel=3, criteria=crit)
    prev = frames[0]
    for gray in frames[1:]:
        q, st, _ = cv2.calcOpticalFlowPyrLK(prev, gray, p, None, **lk)
        if check:
            back, st2, _ = cv2.calcOpticalFlowPyrLK(gray, prev, q, None, **lk)
            fb = np.abs(p - back).reshape(-1, 2).max(-1)
            ok = (st2.reshape(-1) == 1) & (fb < 1)
        else:
            ok = np.ones(len(starts), dtype=bool)
        pts = []
        for k in range(len(starts)):
            if alive[k] and st[k][0] == 1 and ok[k]:
                pts.append([float(q[k][0][0]), float(q[k][0][1])])
            else:
                alive[k] = False
                pts.append(None)
        out.append(pts)
        p, prev = q, gray
    return out


def track_box(frames, starts, r, make):
    side = 2 * r + 1
    first = cv2.cvtColor(frames[0], cv2.COLOR_GRAY2BGR)
    trackers, boxes = [], []
    for x, y in starts:
        box = (int(round(x)) - r, int(round(y)) - r, side, side)
        t = make()
        t.init(first, box)
        trackers.append(t)
        boxes.append(box)
    out = [[[x, y] for x, y in starts]]
    for gray in frames[1:]:
        bgr = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
        pts = []
        for k, t in enumerate(trackers):
            ok, box = t.update(bgr)
            if not ok:
                pts.append(None)
                continue
            # The box's center moved by its displacement (and half its
            # change of size): the point keeps its sub-pixel start.
            dx = box[0] + box[2] / 2 - (boxes[k][0] + boxes[k][2] / 2)
            dy = box[1] + box[3] / 2 - (boxes[k][1] + boxes[k][3] / 2)
            pts.append([float(starts[k][0] + dx), float(starts[k][1] + dy)])
        out.append(pts)
    return out


def main():
    path, w, h, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    starts_path, method = sys.argv[5], sys.argv[6]
    r, rad, min_score = int(sys.argv[7]), int(sys.argv[8]), float(sys.argv[9])
    reverse = len(sys.argv) > 10 and sys.argv[10] == "reverse"
    with open(starts_path) as f:
        starts = json.load(f)
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size != w * h * n:
        sys.exit("%s: %d bytes, want %d frames of %dx%d" % (path, raw.size, n, w, h))
    frames = list(raw.reshape(n, h, w))
    if reverse:
        frames.reverse()
    cv2.setNumThreads(1)
    t0 = time.process_time()
    if method == "template":
        pts = track_template(frames, starts, r, rad, min_score)
        params = "matchTemplate TM_CCOEFF_NORMED, fixed frame-0 template %dx%d cut by getRectSubPix at the exact start point, search +-%d px around the last position, parabola sub-pixel fit, lost below %.2f" % (2 * r + 1, 2 * r + 1, rad, min_score)
    elif method == "lk":
        pts = track_lk(frames, starts, r)
        params = "calcOpticalFlowPyrLK window %dx%d, 3 pyramid levels, 30 iterations / eps 0.01, forward-backward check < 1 px each frame (lk_track.py), lost for good when status is 0 or the check fails" % (2 * r + 1, 2 * r + 1)
    elif method == "lk-plain":
        pts = track_lk(frames, starts, r, check=False)
        params = "calcOpticalFlowPyrLK plain: window %dx%d, 3 pyramid levels, 30 iterations / eps 0.01, no forward-backward check, lost for good when status is 0" % (2 * r + 1, 2 * r + 1)
    elif method == "csrt":
        pts = track_box(frames, starts, r, cv2.TrackerCSRT_create)
        params = "TrackerCSRT default parameters, box %dx%d at the start point, lost while update fails" % (2 * r + 1, 2 * r + 1)
    elif method == "kcf":
        pts = track_box(frames, starts, r, cv2.TrackerKCF_create)
        params = "TrackerKCF default parameters, box %dx%d at the start point, lost while update fails" % (2 * r + 1, 2 * r + 1)
    else:
        sys.exit("unknown method " + method)
    cpu = time.process_time() - t0
    json.dump({"points": pts, "cpu": cpu, "params": params}, sys.stdout)


if __name__ == "__main__":
    main()
