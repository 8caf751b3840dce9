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
            let values: [String: Any] = [
                "days": days, "until": untilText, "from": report.from, "stages": stages,
                "exits": report.exitsByReason.map { ["reason": $0.reason, "flows": $0.flows] },
                "chart": "/console/funnel.svg?days=\(days)&until=\(untilText)",
            ]
            return pages.page("funnel", title: "Funnel", values: values, session: session)
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
