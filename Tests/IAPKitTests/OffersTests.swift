import Foundation
import IAPKit
import Testing

/// Issue 22's offers through the Swift API: the free trial's offer on the
/// typed result, and the typed errors of the offer calls.
@Suite("IAPKit: offers")
struct IAPKitOffersTests {
    @Test("the first subscription's typed result carries the catalog's free trial (introductory, freeTrial, P1W) at price 0; an unknown win-back offer is productUnavailable; bad offer and group IDs throw invalidArgument")
    func trialAndOffers() async throws {
        let env = Install()
        let b = try env.open()
        _ = try await drain(b)
        let k = try b.buy(productID: "vip_monthly")
        let r = try #require(await result(b, key: k))
        #expect(r.result == .success && r.transaction?.price == "0")
        let offer = try #require(r.transaction?.offer)
        #expect(offer.type == "introductory" && offer.id == nil && offer.paymentMode == "freeTrial" && offer.period == "P1W")
        try b.confirm(key: k)

        let unknown = try b.buy(productID: "vip_monthly", winBackOfferID: "no_such_offer")
        let u = try #require(await result(b, key: unknown))
        #expect(u.result == .productUnavailable && u.transaction == nil)
        try b.confirm(key: unknown)

        #expect(throws: IAPKitError.self) { try b.buy(productID: "vip_monthly", winBackOfferID: "") }
        #expect(throws: IAPKitError.self) { try b.manageSubscriptions(groupID: "no_such_group") }
        try b.close()
    }
}
