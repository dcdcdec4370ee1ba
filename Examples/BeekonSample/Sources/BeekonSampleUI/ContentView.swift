import Beekon
import CoreLocation
import MapKit
import SwiftUI

/// One screen: state and start/stop, the live map of this run, a locate answer, the last
/// 24 hours of history.
struct ContentView: View {
    let model: TrackerModel
    @State private var camera: MapCameraPosition = .automatic

    var body: some View {
        NavigationStack {
            VStack(alignment: .leading, spacing: 12) {
                HStack {
                    Text("State: \(model.state.description)").font(.headline)
                    Spacer()
                    Button("Allow location") { model.requestAuthorization() }
                    Button(model.isTracking ? "Stop" : "Start") {
                        Task { await model.startOrStop() }
                    }
                    .buttonStyle(.borderedProminent)
                }
                if let error = model.lastError {
                    Text(error).foregroundStyle(.red).font(.footnote)
                }
                Map(position: $camera) {
                    MapPolyline(coordinates: model.recent.map(\.coordinate)).stroke(.blue, lineWidth: 4)
                    ForEach(Array(model.recent.suffix(1))) { last in
                        Marker("Latest", coordinate: last.coordinate)
                    }
                }
                .frame(minHeight: 240)
                HStack {
                    Button("Locate now") { Task { await model.locate() } }
                    Text(model.locateAnswer).font(.footnote)
                }
                HStack {
                    Text("History (24 h)").font(.headline)
                    Spacer()
                    Button("Reload") { Task { await model.loadHistory() } }
                }
                List(model.history) { location in
                    HStack {
                        Text(location.timestamp, style: .time)
                        Spacer()
                        Text(String(format: "%.5f, %.5f", location.latitude, location.longitude)).monospacedDigit()
                    }
                }
            }
            .padding()
            .navigationTitle("Beekon sample")
        }
        .task { await model.observe() }
        .task { await model.loadHistory() }
    }
}

extension Location {
    /// The fix as a map coordinate.
    var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: latitude, longitude: longitude) }
}
