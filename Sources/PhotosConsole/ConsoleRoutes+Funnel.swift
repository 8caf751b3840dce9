import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosModel
import Sessions

extension ConsoleRoutes {
    func addFunnelRoutes(to router: Router<ConsoleRequestContext>) {
        router.get("/console/funnel") { request, context in
            let session = try context.requireSession()
            let (days, until, untilText) = try Self.range(request)
            let report = try await self.funnel(days: days, until: until)
            let names = ["sessions", "viewed a photo", "started to buy", "asked to sign in", "purchased"]
            let conversions = [nil] + report.conversions
            let stages = zip(names, zip(report.total.steps, conversions)).map { name, pair -> [String: Any] in
                ["name": name, "count": pair.0, "conversion": pair.1.map { String(format: "%.1f %%", $0) } ?? ""]
            }
            var values: [String: Any] = [
                "days": days, "until": untilText, "from": report.from, "stages": stages,
                "exits": report.exitsByReason.map { ["reason": $0.reason, "flows": $0.flows] },
                "chart": "/console/funnel.svg?days=\(days)&until=\(untilText)",
            ]
            // The flow experiments, and the one asked for split by variant.
            let chosen = request.uri.queryParameters.get("experiment").flatMap { $0.isEmpty ? nil : String($0) }
            let experiments = try await services.experiments.list()
            values["experiments"] = experiments.map { listing -> [String: Any] in
                [
                    "name": listing.experiment.name, "point": listing.experiment.point.rawValue,
                    "state": listing.experiment.running ? "running" : "stopped", "selected": listing.experiment.name == chosen,
                ]
            }
            values["hasExperiments"] = !experiments.isEmpty
            if let chosen {
                let comparison = try await self.experimentReport(chosen)
                values["comparison"] = Self.comparisonValues(comparison)
            }
            return pages.page("funnel", title: "Funnel", values: values, session: session)
        }
        router.get("/console/funnel/experiment.svg") { request, context in
            _ = try context.requireSession()
            guard let name = request.uri.queryParameters.get("name") else {
                throw ConsoleRefusal(status: .badRequest, message: "Which experiment? (name=…)")
            }
            let svg = ExperimentChart.svg(try await self.experimentReport(String(name)))
            return Response(
                status: .ok,
                headers: [.contentType: "image/svg+xml", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'"],
                body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
        router.get("/console/funnel.svg") { request, context in
            _ = try context.requireSession()
            let (days, until, _) = try Self.range(request)
            let svg = FunnelChart.svg(try await self.funnel(days: days, until: until))
            return Response(
                status: .ok,
                // The chart is a document of its own: its styles are inline, and it runs nothing.
                headers: [.contentType: "image/svg+xml", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'"],
                body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
    }

    /// Experiment `name`'s variants compared; a console 404 when there is no such experiment.
    private func experimentReport(_ name: String) async throws -> ExperimentReport {
        do {
            return try await services.database.read { try await ExperimentReport.load(experiment: name, on: $0) }
        } catch let error as PhotosError where error.code == .notFound {
            throw ConsoleRefusal(status: .notFound, message: "There is no experiment \(name).")
        }
    }

    /// The template's values for a comparison: one row per variant, in the CLI's words.
    static func comparisonValues(_ report: ExperimentReport) -> [String: Any] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._")
        let variants = report.variants.enumerated().map { index, variant -> [String: Any] in
            let against: String
            if index == 0 {
                against = "control"
            } else if let difference = variant.difference {
                against = ExperimentChart.describe(difference)
            } else {
                against = "no exposure yet"
            }
            return [
                "variant": variant.variant, "exposed": variant.exposed, "reachedBuy": variant.reachedBuy, "askedToSignIn": variant.askedToSignIn,
                "signedIn": variant.signedIn, "purchased": variant.purchased,
                "conversion": variant.conversion.map { String(format: "%.1f %%", $0 * 100) } ?? "-", "against": against,
            ]
        }
        return [
            "name": report.experiment, "point": report.point, "control": report.control, "state": report.running ? "running" : "stopped",
            "variants": variants, "method": report.method,
            "chart": "/console/funnel/experiment.svg?name=\(report.experiment.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")",
        ]
    }

    private func funnel(days: Int, until: Date) async throws -> FunnelReport {
        try await FunnelMarks.catchUp(services.database)
        return try await services.database.read { try await FunnelReport.load(days: days, until: until, on: $0) }
    }

    /// `days` (1…366, default 7) and `until` (a UTC date, default today) from the query.
    private static func range(_ request: Request) throws -> (Int, Date, String) {
        let query = request.uri.queryParameters
        let days = try query.get("days").map { text -> Int in
            guard let days = Int(text), (1...366).contains(days) else {
                throw ConsoleRefusal(status: .badRequest, message: "Days is a number from 1 to 366.")
            }
            return days
        } ?? 7
        let today = String(ISO8601Timestamp.string(from: Date()).prefix(10))
        let text = query.get("until").flatMap { $0.isEmpty ? nil : String($0) } ?? today
        guard text.utf8.count == 10, let day = ISO8601Timestamp.parse(text) else {
            throw ConsoleRefusal(status: .badRequest, message: "Until is a date like \(today).")
        }
        return (days, day.addingTimeInterval(12 * 3_600), text)  // midday: the same UTC date whatever the rounding
    }
}
