// P8: beacon ranging (SPEC BY-5). P8-frames: HCI LE advertising report events decoded into
// beacon readings per second (ours: report + AD walk + frame decode; baseline: the AD walk
// alone). P8-ranging: cost per reading of smoothing + distance + trigger on the real
// two-scanner run (ours: trimmed-mean smoother + tracker; baseline: the same tracker with no
// trimming, 0 % cut), in µs per reading.

import BeekonBeacons
import Foundation

func beaconEvents() -> [[UInt8]] {
    let frames = [
        "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509",
        "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
        "0201060303aafe1716aafe00ecedd1ebeac04e5defa0170bdb87539b670000",
        "0201060303AAFE1716AAFE10F9037275752E76692F23416A5558314D417730",
    ].map { text -> [UInt8] in
        let d = Array(text)
        return stride(from: 0, to: d.count - 1, by: 2).map { UInt8(String(d[$0...$0 + 1]), radix: 16)! }
    }
    return (0..<size(10_000, tiny: 400)).map { i in
        let f = frames[i % frames.count]
        let params: [UInt8] =
            [0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, UInt8(i & 0xFF), UInt8(f.count)] + f + [UInt8(bitPattern: Int8(-40 - i % 50))]
        return [0x3E, UInt8(params.count)] + params
    }
}

func p8(runs: Int) throws -> [Comparison] {
    let events = beaconEvents()
    let time = Date(timeIntervalSince1970: 0)
    var ours: [Double] = []
    var base: [Double] = []
    var readings = 0
    var structures = 0
    for run in 0...runs {
        let clock = ContinuousClock()
        var start = clock.now
        var n = 0
        for e in events {
            for r in try AdvertisingReport.parse(hciEvent: e) ?? [] where try BeaconReading.from(report: r, scanner: "b", time: time) != nil
            { n += 1 }
        }
        let o = (clock.now - start).seconds
        start = clock.now
        var walked = 0
        for e in events { walked += try ADStructure.walk(Array(e[13..<(e.count - 1)])).count }
        let b = (clock.now - start).seconds
        if run > 0 {
            ours.append(Double(events.count) / o)
            base.append(Double(events.count) / b)
        }
        readings = n
        structures = walked
    }
    let recording = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/Data/beacons/starksm64_two_scanners_2015-03-03.json.gz").standardizedFileURL
    let run = BeaconReplay.ordered(BeaconRecording.read(contentsOf: recording).readings)
    guard !run.isEmpty else { throw BenchError(description: "P8: cannot read \(recording.path)") }
    var oursR: [Double] = []
    var baseR: [Double] = []
    var eventCount = 0
    for i in 0...runs {
        for trimmed in [true, false] {
            var tracker = ProximityTracker(
                regions: [], rule: ProximityRule(enterDistance: 6, exitDistance: 8, dwell: 3),
                smoother: RSSISmoother(window: 10, trimFraction: trimmed ? 0.2 : 0, minimumSamples: 5))
            let clock = ContinuousClock()
            let start = clock.now
            var count = 0
            for r in run { count += tracker.observe(r).count }
            let perReading = (clock.now - start).seconds / Double(run.count) * 1e6
            if i > 0 {
                if trimmed {
                    oursR.append(perReading)
                    eventCount = count
                } else {
                    baseR.append(perReading)
                }
            }
        }
    }
    let fo = Stats(ours)
    let fb = Stats(base)
    let ro = Stats(oursR)
    let rb = Stats(baseR)
    return [
        Comparison(
            id: "P8-frames", what: "HCI advertising reports decoded to beacon readings (vs AD walk only)",
            unit: "events/s", ours: fo, baseline: fb, ratio: fo.median / fb.median,
            details: ["events": "\(events.count)", "readings": "\(readings)", "baseline_structures": "\(structures)"]),
        Comparison(
            id: "P8-ranging", what: "smoothing + distance + trigger per reading, two-scanner run (trimmed vs plain mean)",
            unit: "µs/reading", ours: ro, baseline: rb, ratio: ro.median / rb.median,
            details: ["readings": "\(run.count)", "events": "\(eventCount)"]),
    ]
}
