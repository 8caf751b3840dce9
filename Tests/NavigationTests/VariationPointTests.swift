import Navigation
import PhotosModel
import Testing

/// Each variation point is one type of values: what the help, the replay and the coordinators
/// know of a point comes from `VariationPoint.allCases` and that type.
@Suite("Variation points")
struct VariationPointTests {
    @Test("every point's values are its type's cases, the behaviour without an experiment first, and the type names the point back")
    func valuesFromTypes() {
        for point in VariationPoint.allCases {
            let type = point.valueType
            #expect(type.point == point, "\(point) → \(type) → \(type.point)")
            #expect(point.values.count >= 2 && Set(point.values).count == point.values.count, "\(point): \(point.values)")
            #expect(point.defaultValue == point.values[0])
            #expect(VariationPoint.described.contains("\(point.rawValue) (\(point.values.joined(separator: ", ")))"))
        }
        #expect(BuyPresentation(named: nil) == .push && BuyPresentation(named: "modal") == .modal)
        #expect(SignInWhen(named: "atSomeNewMoment") == .atBuy, "a value a newer version wrote is the behaviour without an experiment")
        #expect(TermsRequired(named: "yes") == .yes)
    }

    @Test("a flow's values are read typed from what it took; a point it did not take is the default")
    func flowValues() {
        var flow = BuyFlow(presentation: .push, photoId: 1, stackIndex: 0, initialDepth: 2)
        #expect(flow.value(TermsRequired.self) == .no && flow.value(SignInWhen.self) == .atBuy)
        flow.variants = ["terms.required": "yes", "signIn.when": "atPurchase"]
        #expect(flow.value(TermsRequired.self) == .yes && flow.value(SignInWhen.self) == .atPurchase)
        #expect(flow.value(BuyPresentation.self) == .push)
    }
}
