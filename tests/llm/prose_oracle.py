"""A scripted "model" for the fixture prose: it answers each chunk with the relations whose
trigger text the chunk holds, the way a model reading that chunk would, including the usual
mistakes (an invented quote, an off-schema predicate, a reversed edge, an entity the text
never names). Used by the end-to-end tests and the benchmarks."""

from __future__ import annotations

import json

from fakellm import Reply, rel

from kgbuild.extract.text.prompts import GLEANING

# (text the chunk must hold, the relation the model answers)
FACTS = [
    # design doc: what it states
    ("Checkout Service depends on Pricing SDK for every",
     rel("Checkout Service", "dependsOn", "Pricing SDK",
         "Checkout Service depends on Pricing SDK for every price it shows or charges.")),
    ("is owned by Commerce Platform, who also",
     rel("Pricing SDK", "ownedBy", "Commerce Platform",
         "The Pricing SDK is owned by Commerce Platform", None, "Group")),  # a line break inside
    ("Checkout Service consumes Payments API",
     rel("Checkout Service", "consumesApi", "Payments API",
         "Checkout Service consumes Payments API to charge the card")),
    ("Payments API is owned by Commerce Platform.",
     rel("Payments API", "ownedBy", "Commerce Platform", "Payments API is owned by Commerce Platform.")),
    ("Payments Service provides Payments API",
     rel("Payments Service", "providesApi", "Payments API", "Payments Service provides Payments API")),
    ("Storefront Team owns Checkout Service",
     rel("Storefront Team", "ownerOf", "Checkout Service", "Storefront Team owns Checkout Service",
         "Group", "Service")),
    ("Pricing SDK is the shared",  # an attribute value: a literal, not an entity
     rel("Pricing SDK", "description", "the shared pricing library",
         "Pricing SDK is the shared pricing library")),
    # design doc: the model's mistakes
    ("We rejected calling",  # a quote the text does not hold
     rel("Checkout Service", "dependsOn", "Pricing Web Service",
         "Checkout calls the pricing web service on every click")),
    ("We rejected calling",  # a predicate the schema does not have
     rel("Storefront Team", "rejected", "pricing web service",
         "We rejected calling a pricing web service")),
    ("Payments API is owned by Commerce Platform.",  # reversed: a Group is owned by an API
     rel("Commerce Platform", "ownedBy", "Payments API",
         "Payments API is owned by Commerce Platform.", "Group", "API")),
    ("keeps\nthe card data",  # an entity the text never names
     rel("Payments Service", "dependsOn", "Card Vault",
         "Payments Service provides Payments API and keeps the card data in its own database")),
    # runbook
    ("The Pricing SDK is maintained by Commerce Platform",
     rel("Pricing SDK", "ownedBy", "Commerce Platform",
         "The Pricing SDK is maintained by Commerce Platform")),
    ("Web Shop depends on Checkout Service",
     rel("Web Shop", "dependsOn", "Checkout Service", "Web Shop depends on Checkout Service")),
    ("it is owned by Commerce Platform",
     rel("Payments API", "ownedBy", "Commerce Platform",
         "look at Payments API: it is owned by Commerce Platform")),
]

EXPECTED_ATTRIBUTES = {  # (entity, attribute, value) the prose states
    ("component:default/pricing-sdk", "description", "the shared pricing library"),
}
EXPECTED_EDGES = {  # what the prose must add, on the catalog's IDs
    ("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk"),
    ("component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform"),
    ("component:default/checkout-service", "consumesApi", "api:default/payments-api"),
    ("api:default/payments-api", "ownedBy", "group:default/commerce-platform"),
    ("component:default/payments-service", "providesApi", "api:default/payments-api"),
    ("component:default/checkout-service", "ownedBy", "group:default/storefront"),
    ("component:default/web-shop", "dependsOn", "component:default/checkout-service"),
}


def chunk_of(body: dict) -> str:
    """The chunk text of an extraction request (between the triple quotes)."""
    users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
    first = users[0] if users else ""
    start = first.find('"""\n')
    end = first.rfind('\n"""')
    return first[start + 4:end] if 0 <= start < end else first


def oracle(body: dict, facts=FACTS) -> Reply:
    users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
    if users and users[-1] == GLEANING:
        return Reply(json.dumps({"relations": []}))
    text = chunk_of(body)
    return Reply.relations(*[r for needle, r in facts if needle in text])
