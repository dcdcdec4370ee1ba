import BeekonLoad
import Testing

@Suite("Load generator (issue 32: latency report, saturation, read-back check)")
struct ReportTests {
    @Test("percentiles of 1…1000 ms and achieved throughput come out of the histogram")
    func percentiles() {
        let recorder = LatencyRecorder()
        for ms in 1...1_000 { recorder.record(.milliseconds(ms)) }
        recorder.record(.milliseconds(5), failure: "HTTP 503")
        let report = recorder.report(elapsed: 10)
        #expect(report.ok == 1_000 && report.failed == 1)
        #expect(report.achievedRate == 100)
        #expect(abs(report.millis(at: 50) - 500) < 1)
        #expect(abs(report.millis(at: 90) - 900) < 1)
        #expect(abs(report.millis(at: 99) - 990) < 1)
        #expect(abs(report.millis(at: 100) - 1_000) < 1)
        #expect(report.summary.hasPrefix("achieved 100 req/s (1000 ok, 1 failed); latency ms p50 50"))
        #expect(report.summary.contains("failures: HTTP 503 ×1"))
    }

    @Test("a step is saturated when achieved < 95 % of target, p99 is over the limit, or anything failed")
    func saturation() {
        let rule = SaturationRule(minimumRatio: 0.95, p99LimitMillis: 100)
        func report(rate: Int, latencyMs: Int, failed: Bool = false) -> LatencyReport {
            let r = LatencyRecorder()
            for _ in 0..<rate { r.record(.milliseconds(latencyMs)) }
            if failed { r.record(.milliseconds(1), failure: "HTTP 503") }
            return r.report(elapsed: 1)
        }
        #expect(rule.verdict(target: 1_000, report(rate: 960, latencyMs: 5)) == nil)
        #expect(rule.verdict(target: 1_000, report(rate: 940, latencyMs: 5))?.hasPrefix("achieved 940") == true)
        #expect(rule.verdict(target: 1_000, report(rate: 1_000, latencyMs: 150))?.hasPrefix("p99 150") == true)
        #expect(rule.verdict(target: 1_000, report(rate: 1_000, latencyMs: 5, failed: true)) == "1 requests failed")
        #expect(SaturationRule.steps(start: 500, step: 250, maximum: 1_500) == [500, 750, 1_000, 1_250, 1_500])
    }

    @Test("read-back: a fix not stored, or stored twice, fails the run; other devices' fixes do not")
    func readBack() {
        let sent = ["a": ["1", "2", "3"], "b": ["4"]]
        #expect(ReadBackCheck.compare(sent: sent, stored: ["a": ["3", "1", "2"], "b": ["4"]]).isClean)
        let lost = ReadBackCheck.compare(sent: sent, stored: ["a": ["1", "3"], "b": ["4", "4", "9"]])
        #expect(!lost.isClean)
        #expect(lost.sent == 4)
        #expect(lost.missing == ["2"])
        #expect(lost.duplicated == ["4"])
        #expect(lost.unexpected == 1)
        #expect(lost.summary.hasPrefix("read back 4 fixes: 1 lost, 1 stored twice, 1 not sent by this run"))
        #expect(!ReadBackCheck.compare(sent: sent, stored: [:]).isClean)
    }

    @Test("delivery: every viewer must get every event once")
    func delivery() {
        let counts = ["x": 3, "y": 3]
        #expect(DeliveryCheck.compare(ids: ["x", "y"], viewers: 3) { counts[$0] ?? 0 }.isClean)
        let short = DeliveryCheck.compare(ids: ["x", "y", "z"], viewers: 3) { counts[$0] ?? 0 }
        #expect(short.missing == 3 && !short.isClean)
        let twice = DeliveryCheck.compare(ids: ["x"], viewers: 2) { counts[$0] ?? 0 }
        #expect(twice.extra == 1 && !twice.isClean)
    }
}
