#!/usr/bin/env python3
"""Converts a FIT or TCX activity to a compact GPX 1.1 track: one <trkpt> per record that has a
position and a time, in the file's order; nothing dropped, smoothed or resampled. The label
(<type>) and a description naming the source path and where the label came from are written
into the track. FIT needs fitdecode (pip install fitdecode==0.11.0).

  scripts/fit-to-gpx.py INPUT SOURCE_DESC MODE > out.gpx

Used for the labelled recordings of issue 29 (Tests/Data/labelled/README.md); not run by CI.
"""
import sys, gzip, xml.etree.ElementTree as ET
from xml.sax.saxutils import escape
from datetime import timezone

def fit_points(path):
    import fitdecode
    sports = []
    pts = []
    with fitdecode.FitReader(path) as fit:
        for frame in fit:
            if not isinstance(frame, fitdecode.FitDataMessage):
                continue
            if frame.name == 'session':
                sp = frame.get_value('sport', fallback=None)
                sub = frame.get_value('sub_sport', fallback=None)
                sports.append(f"sport={sp} sub_sport={sub}")
            if frame.name != 'record':
                continue
            lat = frame.get_value('position_lat', fallback=None)
            lon = frame.get_value('position_long', fallback=None)
            ts = frame.get_value('timestamp', fallback=None)
            if lat is None or lon is None or ts is None:
                continue
            ele = frame.get_value('enhanced_altitude', fallback=None)
            if ele is None:
                ele = frame.get_value('altitude', fallback=None)
            pts.append((lat * SEMICIRCLE, lon * SEMICIRCLE, ele, ts.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')))
    return pts, "; ".join(sports)

SEMICIRCLE = 180.0 / 2**31  # FIT stores latitude and longitude in semicircles

def tcx_points(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        root = ET.parse(f).getroot()
    ns = {'t': 'http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2'}
    sports = [a.get('Sport') for a in root.iter('{%s}Activity' % ns['t'])]
    pts = []
    for tp in root.iter('{%s}Trackpoint' % ns['t']):
        t = tp.find('t:Time', ns); la = tp.find('t:Position/t:LatitudeDegrees', ns)
        lo = tp.find('t:Position/t:LongitudeDegrees', ns); el = tp.find('t:AltitudeMeters', ns)
        if t is None or la is None or lo is None:
            continue
        pts.append((float(la.text), float(lo.text), float(el.text) if el is not None else None, t.text.strip()))
    return pts, "TCX Activity Sport=" + ",".join(s or '' for s in sports)

inp, desc, mode = sys.argv[1], sys.argv[2], sys.argv[3]
is_fit = inp.lower().endswith('.fit')
pts, label = fit_points(inp) if is_fit else tcx_points(inp)
desc, label, mode = escape(desc), escape(label), escape(mode)
out = sys.stdout
out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
conv = 'fitdecode' if is_fit else 'TCX'
out.write(f'<gpx version="1.1" creator="{conv}-to-gpx conversion (scripts/fit-to-gpx.py)" xmlns="http://www.topografix.com/GPX/1/1">\n')
out.write(f'  <metadata><desc>{desc}; {label}</desc></metadata>\n')
out.write(f'  <trk><name>{desc}</name><type>{mode}</type><trkseg>\n')
for la, lo, el, t in pts:
    e = f'<ele>{el:.1f}</ele>' if el is not None else ''
    out.write(f'    <trkpt lat="{la:.7f}" lon="{lo:.7f}">{e}<time>{t}</time></trkpt>\n')
out.write('  </trkseg></trk>\n</gpx>\n')
print(f"{inp}: {len(pts)} points; {label}", file=sys.stderr)
