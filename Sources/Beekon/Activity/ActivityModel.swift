import Foundation

/// A multinomial logistic model over ``ActivityFeatures`` (BY-4): one weight per class and
/// feature on standardised inputs. Its numbers live in `ActivityModel+Trained.swift`, written
/// by `scripts/train-activity.sh` (`beekon activity --train`) from the training recordings
/// named in `Tests/Data/labelled/SPLIT.md` only — never from the evaluation set.
package struct ActivityModel: Sendable, Equatable {
    /// The classes, in the order of ``weights`` and of ``probabilities(_:)``. A train is
    /// `automotive` (as CoreMotion reports it).
    package static let classes: [Activity] = [.walking, .running, .cycling, .automotive]

    /// Per feature: the training mean subtracted before weighting.
    package var means: [Double]
    /// Per feature: the training standard deviation divided by before weighting.
    package var scales: [Double]
    /// Per class, per feature.
    package var weights: [[Double]]
    /// Per class.
    package var biases: [Double]

    /// Creates a model from its numbers.
    package init(means: [Double], scales: [Double], weights: [[Double]], biases: [Double]) {
        self.means = means
        self.scales = scales
        self.weights = weights
        self.biases = biases
    }

    /// The standardised input: `(x - mean) / scale` per feature.
    package func standardised(_ x: [Double]) -> [Double] {
        zip(x, zip(means, scales)).map { v, ms in (v - ms.0) / ms.1 }
    }

    /// Class probabilities (softmax of the linear scores), in ``classes`` order.
    package func probabilities(_ x: [Double]) -> [Double] {
        Self.softmax(scores(standardised: standardised(x)))
    }

    func scores(standardised z: [Double]) -> [Double] {
        weights.indices.map { c in zip(weights[c], z).reduce(biases[c]) { $0 + $1.0 * $1.1 } }
    }

    static func softmax(_ s: [Double]) -> [Double] {
        let m = s.max() ?? 0
        let e = s.map { exp($0 - m) }
        let sum = e.reduce(0, +)
        return e.map { $0 / sum }
    }

    /// Fits a model by gradient descent on the weighted cross-entropy with an L2 penalty
    /// (`lambda`, on weights, not biases). `samples` are (features, class index, weight).
    /// Deterministic: the same samples give the same numbers.
    package static func train(
        _ samples: [(x: [Double], y: Int, weight: Double)], lambda: Double = 0.001, iterations: Int = 1000, rate: Double = 3
    ) -> ActivityModel {
        let k = classes.count
        let n = samples.first?.x.count ?? ActivityFeatures.names.count
        let total = samples.reduce(0) { $0 + $1.weight }
        var means = [Double](repeating: 0, count: n)
        var scales = [Double](repeating: 1, count: n)
        if total > 0 {
            for j in 0..<n { means[j] = samples.reduce(0) { $0 + $1.x[j] * $1.weight } / total }
            for j in 0..<n {
                let v = samples.reduce(0) { $0 + ($1.x[j] - means[j]) * ($1.x[j] - means[j]) * $1.weight } / total
                scales[j] = v > 1e-12 ? v.squareRoot() : 1
            }
        }
        var model = ActivityModel(
            means: means, scales: scales, weights: Array(repeating: Array(repeating: 0, count: n), count: k),
            biases: Array(repeating: 0, count: k))
        guard total > 0 else { return model }
        // Flat raw buffers: this runs in debug builds too (tests, `beekon activity --evaluate`),
        // where an Array subscript is a function call; the arithmetic and its order are the same.
        let m = samples.count
        func zeros(_ count: Int) -> UnsafeMutableBufferPointer<Double> {
            let buffer = UnsafeMutableBufferPointer<Double>.allocate(capacity: count)
            buffer.initialize(repeating: 0)
            return buffer
        }
        let z = zeros(m * n)
        let w = zeros(m)
        let wt = zeros(k * n)
        let b = zeros(k)
        let gw = zeros(k * n)
        let gb = zeros(k)
        let p = zeros(k)
        defer { for buffer in [z, w, wt, b, gw, gb, p] { buffer.deallocate() } }
        let y = UnsafeMutableBufferPointer<Int>.allocate(capacity: m)
        defer { y.deallocate() }
        for (i, s) in samples.enumerated() {
            for (j, v) in model.standardised(s.x).enumerated() { z[i * n + j] = v }
            y[i] = s.y
            w[i] = s.weight / total
        }
        for _ in 0..<iterations {
            for i in 0..<(k * n) { gw[i] = 0 }
            for c in 0..<k { gb[c] = 0 }
            for i in 0..<m {
                var top = -Double.infinity
                for c in 0..<k {
                    var score = b[c]
                    for j in 0..<n { score += wt[c * n + j] * z[i * n + j] }
                    p[c] = score
                    top = max(top, score)
                }
                var sum = 0.0
                for c in 0..<k {
                    p[c] = exp(p[c] - top)
                    sum += p[c]
                }
                for c in 0..<k {
                    let e = (p[c] / sum - (c == y[i] ? 1 : 0)) * w[i]
                    gb[c] += e
                    for j in 0..<n { gw[c * n + j] += e * z[i * n + j] }
                }
            }
            for c in 0..<k {
                b[c] -= rate * gb[c]
                for j in 0..<n { wt[c * n + j] -= rate * (gw[c * n + j] + lambda * wt[c * n + j]) }
            }
        }
        model.biases = Array(b)
        model.weights = (0..<k).map { c in Array(wt[(c * n)..<((c + 1) * n)]) }
        return model
    }

    /// The model as Swift source (the body of `ActivityModel+Trained.swift`).
    package func swiftSource(header: String) -> String {
        func list(_ v: [Double]) -> String { "[" + v.map { String(format: "%.6f", $0) }.joined(separator: ", ") + "]" }
        return """
            // \(header)
            // Generated by scripts/train-activity.sh (`beekon activity --train`); do not edit by hand.

            extension ActivityModel {
                /// The shipped model, trained on the training recordings of `Tests/Data/labelled/SPLIT.md`.
                /// Features: \(ActivityFeatures.names.joined(separator: ", ")).
                package static let trained = ActivityModel(
                    means: \(list(means)),
                    scales: \(list(scales)),
                    weights: [
            \(weights.enumerated().map { "            \(list($0.element)),  // \(Self.classes[$0.offset].rawValue)" }.joined(separator: "\n"))
                    ],
                    biases: \(list(biases)))
            }

            """
    }
}
