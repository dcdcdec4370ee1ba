/// Douglas–Peucker line simplification (Douglas & Peucker 1973), independent of the measure:
/// the one implementation behind the SDK's offline fidelity reference (spherical cross-track
/// metres) and the ingest server's map simplifier (planar metres, squared).
public enum DouglasPeucker {
    /// Which of `count` points the simplification keeps (the first and last always).
    ///
    /// `deviation(i, lo, hi)` is how far point `i` lies from the segment from point `lo` to
    /// point `hi` (`lo < i < hi`), in any monotone measure; a point is kept when the farthest
    /// deviation of a span exceeds `tolerance` in that measure. Iterative (no recursion depth).
    @inlinable
    public static func keep(count: Int, tolerance: Double, deviation: (_ i: Int, _ lo: Int, _ hi: Int) -> Double) -> [Bool] {
        guard count > 2 else { return [Bool](repeating: true, count: count) }
        var keep = [Bool](repeating: false, count: count)
        keep[0] = true
        keep[count - 1] = true
        var stack = [(0, count - 1)]
        while let (lo, hi) = stack.popLast() {
            guard hi > lo + 1 else { continue }
            var worst = -1.0
            var at = lo
            for i in (lo + 1)..<hi {
                let d = deviation(i, lo, hi)
                if d > worst {
                    worst = d
                    at = i
                }
            }
            if worst > tolerance {
                keep[at] = true
                stack.append((lo, at))
                stack.append((at, hi))
            }
        }
        return keep
    }
}
