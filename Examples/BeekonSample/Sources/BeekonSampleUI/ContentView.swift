import Beekon
import CoreLocation
import MapKit
import SwiftUI

/// One screen: enrolment with a server, start/stop, the live state, location health and upload
/// status, a map of this run's track over today's history, and the last locate answer.
struct ContentView: View {
    let model: TrackerModel
    @State private var camera: MapCameraPosition = .automatic
    @State private var serverText = ""
    @State private var codeText = ""
    @Environment(\.scenePhase) private var scenePhase

    var body: some View {
        NavigationStack {
            VStack(alignment: .leading, spacing: 10) {
                if let server = model.server {
                    Text("Server: \(server.absoluteString)").font(.footnote)
                } else {
                    enrolment
                }
                HStack {
                    Text("State: \(model.state.description)").font(.headline)
                    Spacer()
                    Button("Allow location") { model.requestAuthorization() }
                    Button(model.isTracking ? "Stop" : "Start") {
                        Task { await model.startOrStop() }
                    }
                    .buttonStyle(.borderedProminent)
                }
                Text("Location health: \(model.health.names)").font(.footnote)
                Text("Uploads: \(model.sync)").font(.footnote)
                Text("Push: \(model.push)").font(.footnote)
                if let error = model.lastError {
                    Text(error).foregroundStyle(.red).font(.footnote)
                }
                map
                HStack {
                    Text("Today: \(model.today.count) fixes, this run: \(model.recent.count)").font(.footnote)
                    Spacer()
                    Button("Reload today") { Task { await model.loadToday() } }
                }
                locateAnswer
            }
            .padding()
            .navigationTitle("Beekon sample")
        }
        .task { await model.observe() }
        .task { await model.loadToday() }
        // Back from the background (a walk with the phone locked): today's history has grown.
        .onChange(of: scenePhase) { _, phase in
            if phase == .active { Task { await model.loadToday() } }
        }
    }

    /// The server's base URL and an enrollment code (`POST /v1/enrollments` on the server).
    private var enrolment: some View {
        VStack(alignment: .leading) {
            TextField("Server, e.g. https://ingest.example.com", text: $serverText)
                .autocorrectionDisabled()
                #if os(iOS)
                    .textInputAutocapitalization(.never)
                    .keyboardType(.URL)
                #endif
            TextField("Enrollment code", text: $codeText)
                .autocorrectionDisabled()
                #if os(iOS)
                    .textInputAutocapitalization(.never)
                #endif
            Button(model.enrolling ? "Enrolling…" : "Enrol") {
                Task { await model.enroll(server: serverText, code: codeText) }
            }
            .disabled(model.enrolling || serverText.isEmpty || codeText.isEmpty)
        }
        .textFieldStyle(.roundedBorder)
    }

    /// Today's history in grey under this run's live track in blue; the newest fix and the
    /// last locate answer marked.
    private var map: some View {
        Map(position: $camera) {
            MapPolyline(coordinates: model.today.map(\.coordinate)).stroke(.gray, lineWidth: 3)
            MapPolyline(coordinates: model.recent.map(\.coordinate)).stroke(.blue, lineWidth: 4)
            if let last = model.recent.last {
                Marker("Latest", coordinate: last.coordinate)
            }
            if let answer = model.lastLocateAnswer {
                Marker("Locate answer", systemImage: "scope", coordinate: answer.coordinate).tint(.orange)
            }
        }
        .frame(minHeight: 240)
    }

    @ViewBuilder private var locateAnswer: some View {
        if let answer = model.lastLocateAnswer {
            HStack {
                Text("Answered a locate request at")
                Text(answer.timestamp, style: .time)
                Text(String(format: "%.5f, %.5f ±%.0f m", answer.latitude, answer.longitude, answer.accuracy ?? -1)).monospacedDigit()
            }
            .font(.footnote)
        } else {
            Text("No locate request answered yet: press “locate now” on the server's dashboard.").font(.footnote)
        }
    }
}

extension Location {
    /// The fix as a map coordinate.
    var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: latitude, longitude: longitude) }
}
