"""Tests of nara_kg.ingest.parsing on hand-written synthetic records (and, when present, the real
records in ../shared, read at test time only)."""

from __future__ import annotations

import copy
import gzip
import io
import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from nara_kg.ingest.parsing.fields import FIELDS_BY_TYPE
from nara_kg.ingest.parsing.readers import iter_file, parse_line
from nara_kg.ingest.parsing.results import (
    REJECT_CATEGORIES,
    ParsedRecord,
    Reference,
    Rejected,
    reject_category,
)
from nara_kg.model.schema import RECORD_TYPES, REFERENCE_LISTS

SHARED_NARA = Path(__file__).resolve().parents[3] / "shared" / "data" / "nara"
EXPORT_DIR = SHARED_NARA / "export"
HITS_DIR = SHARED_NARA / "api-v2-hits"
needs_real_data = pytest.mark.skipif(
    not EXPORT_DIR.is_dir(), reason="real NARA samples (../shared/data/nara) not present"
)


def url(na_id: int) -> str:
    return f"https://catalog.archives.gov/id/{na_id}"


def export_line(record: dict[str, Any], **siblings: Any) -> str:
    return json.dumps({"record": record, **siblings})


def api_hit_line(record: dict[str, Any]) -> str:
    return json.dumps(
        {
            "_index": "demo-index",
            "_type": "_doc",
            "_id": str(record.get("naId")),
            "_score": 1.5,
            "_source": {"metadata": {"fileName": "demo.xml"}, "record": record},
        }
    )


def parse(record: dict[str, Any], **siblings: Any) -> ParsedRecord:
    result = parse_line(export_line(record, **siblings), "demo.jsonl", 1)
    assert isinstance(result, ParsedRecord), result
    return result


def reject(line: str | bytes) -> Rejected:
    result = parse_line(line, "demo.jsonl", 7)
    assert isinstance(result, Rejected), result
    assert (result.file_name, result.line_num) == ("demo.jsonl", 7)
    return result


def date(year: int, month: int | None = None, day: int | None = None, end: bool = False) -> dict:
    obj: dict[str, Any] = {"year": year}
    if month:
        obj["month"] = month
    if day:
        obj["day"] = day
    logical_month = month or (12 if end else 1)
    logical_day = day or (31 if end else 1)
    obj["logicalDate"] = f"{year}-{logical_month:02d}-{logical_day:02d}"
    return obj


# ---------------------------------------------------------------------------------------------
# Synthetic fixtures: one per record type, shaped like STRUCTURE.md (all values invented)
# ---------------------------------------------------------------------------------------------

REFERENCE_UNIT: dict[str, Any] = {
    "name": "Example Archives Unit",
    "address1": "1 Sample Road",
    "city": "Sampletown",
    "state": "ZZ",
    "postalCode": "00001",
    "phone": "555-000-0001",
    "email": "unit@example.org",
}
RG_STUB: dict[str, Any] = {
    "distance": 2,
    "levelOfDescription": "recordGroup",
    "naId": 9000001,
    "recordGroupNumber": 901,
    "title": "Records of the Example Survey Agency",
    "inclusiveStartDate": date(1920),
    "inclusiveEndDate": date(1960, end=True),
}
SERIES_STUB: dict[str, Any] = {
    "distance": 1,
    "levelOfDescription": "series",
    "naId": 9100001,
    "title": "Field Notebooks of the Tidewater Survey",
    "inclusiveStartDate": date(1931, 3, 2),
    "inclusiveEndDate": date(1938, end=True),
    "creators": [
        {
            "creatorType": "Most Recent",
            "authorityType": "organization",
            "naId": 9200011,
            "heading": "Department of Examples. Tidewater Survey Office. 1930-1940",
            "establishDate": date(1930),
            "abolishDate": date(1940, end=True),
        }
    ],
}

SERIES: dict[str, Any] = {
    "naId": 9100001,
    "levelOfDescription": "series",
    "recordType": "description",
    "title": "Field Notebooks of the Tidewater Survey",
    "inclusiveStartDate": date(1931, 3, 2),
    "inclusiveEndDate": date(1938, end=True),
    "creators": [
        SERIES_STUB["creators"][0],
        {
            "creatorType": "Predecessor",
            "authorityType": "person",
            "naId": 9200020,
            "heading": "Quill, Amos, 1880-1950",
            "birthDate": date(1880),
            "deathDate": date(1950, end=True),
        },
    ],
    "subjects": [
        {"naId": 9300001, "heading": "Tide gauges", "authorityType": "topicalSubject"},
        {
            "naId": 9300002,
            "heading": "Marsh Harbor (Fict.)",
            "authorityType": "geographicPlaceName",
        },
        {"naId": "9300003", "heading": "Field notebooks", "authorityType": "specificRecordsType"},
    ],
    "scopeAndContentNote": "  This series consists of field notebooks.\n\nThey record tides.  ",
    "variantControlNumbers": [
        {"number": "TS 1", "type": "HMS/MLR Entry Number"},
        {"number": "77", "type": "Other Identifier", "note": "Old number."},
    ],
    "localIdentifier": "901-TS-1",
    "generalRecordsTypes": ["Textual Records"],
    "physicalOccurrences": [
        {
            "copyStatus": "Preservation",
            "extent": "3 linear feet",
            "holdingsMeasurements": [{"count": 3.0, "type": "linear feet"}],
            "referenceUnits": [REFERENCE_UNIT],
            "mediaOccurrences": [
                {"specificMediaType": "Paper", "generalMediaTypes": ["Loose Sheets"]}
            ],
        }
    ],
    "accessRestriction": {
        "status": "Restricted - Partly",
        "note": "Screened before release.",
        "specificAccessRestrictions": [{"restriction": "FOIA (b)(6) Personal Information"}],
    },
    "useRestriction": {"status": "Unrestricted"},
    "dataControlGroup": {"groupCd": "XX", "groupId": "ou=XX,ou=groups", "groupName": "Demo Group"},
    "fileUnitCount": 12.0,
    "itemCount": "40",
    "findingAids": [
        {"findingAidtype": "Folder List", "url": "https://example.org/fa.pdf", "note": "List."}
    ],
    "onlineResources": [{"url": "https://example.org/guide", "note": "Guide"}],
    "ancestors": [{**RG_STUB, "distance": 1}],
}
SERIES_PROPERTIES = {
    "naId": 9100001,
    "title": "Field Notebooks of the Tidewater Survey",
    "recordType": "description",
    "levelOfDescription": "series",
    "source": url(9100001),
    "ancestors": [9000001],
    "authorityType_creators": ["organization", "person"],
    "creatorType_creators": ["Most Recent", "Predecessor"],
    "heading_creators": [
        "Department of Examples. Tidewater Survey Office. 1930-1940",
        "Quill, Amos, 1880-1950",
    ],
    "naId_creators": [9200011, 9200020],
    "note_accessRestriction": "Screened before release.",
    "status_accessRestriction": "Restricted - Partly",
    "groupName_dataControlGroup": "Demo Group",
    "fileUnitCount": 12,
    "findingAidtype_findingAids": ["Folder List"],
    "note_findingAids": ["List."],
    "url_findingAids": ["https://example.org/fa.pdf"],
    "generalRecordsTypes": ["Textual Records"],
    "logicalDate_inclusiveEndDate": "1938-12-31",
    "logicalDate_inclusiveStartDate": "1931-03-02",
    "itemCount": 40,
    "localIdentifier": "901-TS-1",
    "note_onlineResources": ["Guide"],
    "url_onlineResources": ["https://example.org/guide"],
    "copyStatus_physicalOccurrences": ["Preservation"],
    "extent_physicalOccurrences": ["3 linear feet"],
    "name_referenceUnits": ["Example Archives Unit"],
    "authorityType_subjects": ["topicalSubject", "geographicPlaceName", "specificRecordsType"],
    "heading_subjects": ["Tide gauges", "Marsh Harbor (Fict.)", "Field notebooks"],
    "naId_subjects": [9300001, 9300002, 9300003],
    "status_useRestriction": "Unrestricted",
    "note_variantControlNumbers": ["Old number."],
    "number_variantControlNumbers": ["TS 1", "77"],
    "type_variantControlNumbers": ["HMS/MLR Entry Number", "Other Identifier"],
}

FILE_UNIT: dict[str, Any] = {
    "naId": 9110001,
    "levelOfDescription": "fileUnit",
    "recordType": "description",
    "title": "Notebook 4, Spring Tides",
    "generalRecordsTypes": ["Textual Records"],
    "ancestors": [RG_STUB, SERIES_STUB],
    "physicalOccurrences": [
        {
            "copyStatus": "Preservation-Reproduction-Reference",
            "referenceUnits": [REFERENCE_UNIT],
            "mediaOccurrences": [{"specificMediaType": "Paper"}],
        }
    ],
    "digitalObjects": [
        {
            "objectId": "1",
            "objectFilename": "p1.pdf",
            "objectFileSize": 1000,
            "objectType": "Portable Document File (PDF)",
            "objectUrl": "https://example.org/p1.pdf",
        },
        {
            "objectId": "2",
            "objectFilename": "p2.pdf",
            "objectFileSize": 2000,
            "objectUrl": "https://example.org/p2.pdf",
        },
    ],
    "accessRestriction": {"status": "Unrestricted"},
    "useRestriction": {
        "status": "Restricted - Possibly",
        "specificUseRestrictions": ["Copyright"],
        "note": "May be under copyright.",
    },
    "otherTitles": ["NB-4"],
    "itemCount": 2.0,
    "arrangement": "Chronological.",
    "onlineResources": [{"url": "https://example.org/x", "description": "Scan index"}],
}
FILE_UNIT_PROPERTIES = {
    "naId": 9110001,
    "title": "Notebook 4, Spring Tides",
    "recordType": "description",
    "levelOfDescription": "fileUnit",
    "source": url(9110001),
    "ancestors": [9100001, 9000001],
    "status_accessRestriction": "Unrestricted",
    "arrangement": "Chronological.",
    "objectType_digitalObjects": ["Portable Document File (PDF)"],
    "objectUrl_digitalObjects": ["https://example.org/p1.pdf", "https://example.org/p2.pdf"],
    "generalRecordsTypes": ["Textual Records"],
    "itemCount": 2,
    "description_onlineResources": ["Scan index"],
    "url_onlineResources": ["https://example.org/x"],
    "otherTitles": ["NB-4"],
    "copyStatus_physicalOccurrences": ["Preservation-Reproduction-Reference"],
    "name_referenceUnits": ["Example Archives Unit"],
    "note_useRestriction": "May be under copyright.",
    "specificUseRestrictions_useRestriction": ["Copyright"],
    "status_useRestriction": "Restricted - Possibly",
}

ITEM: dict[str, Any] = {
    "naId": 9120001,
    "levelOfDescription": "item",
    "recordType": "description",
    "title": "Letter About a Broken Tide Gauge",
    "audiovisual": "False",
    "productionDates": [date(1934, 5, 6), date(1934, 5, 2)],
    "coverageStartDate": date(1933),
    "coverageEndDate": date(1934, end=True),
    "ancestors": [
        SERIES_STUB | {"distance": 2},
        RG_STUB | {"distance": 3},
        {"distance": 1, "levelOfDescription": "fileUnit", "naId": 9110001, "title": "NB 4"},
    ],
    "contributors": [
        {
            "naId": 9200030,
            "heading": "Lens, Ada, 1900-1980",
            "authorityType": "person",
            "contributorType": "Photographer",
        }
    ],
    "digitalObjects": [
        {"objectId": "5", "objectUrl": "https://example.org/5.jpg", "extractedText": " OCR one "},
        {"objectId": "6", "objectUrl": "https://example.org/6.jpg", "extractedText": "OCR two"},
        {"objectId": "7", "objectUrl": "https://example.org/7.jpg", "objectDescription": "cover"},
    ],
    "scopeAndContentNote": "Short note.",
    "physicalOccurrences": [{"copyStatus": "Preservation", "extent": "2 pages"}],
    "languages": ["English"],
    "microformPublications": [{"identifier": "M9", "title": "Tide Letters", "note": "Reel 1"}],
}
ITEM_PROPERTIES = {
    "naId": 9120001,
    "title": "Letter About a Broken Tide Gauge",
    "recordType": "description",
    "levelOfDescription": "item",
    "source": url(9120001),
    "ancestors": [9110001, 9100001, 9000001],
    "audiovisual": False,
    "authorityType_contributors": ["person"],
    "contributorType_contributors": ["Photographer"],
    "heading_contributors": ["Lens, Ada, 1900-1980"],
    "naId_contributors": [9200030],
    "logicalDate_coverageEndDate": "1934-12-31",
    "logicalDate_coverageStartDate": "1933-01-01",
    "objectDescription_digitalObjects": ["cover"],
    "objectUrl_digitalObjects": [
        "https://example.org/5.jpg",
        "https://example.org/6.jpg",
        "https://example.org/7.jpg",
    ],
    "languages": ["English"],
    "identifier_microformPublications": ["M9"],
    "note_microformPublications": ["Reel 1"],
    "title_microformPublications": ["Tide Letters"],
    "logicalDate_productionDates": ["1934-05-06", "1934-05-02"],
    "scopeAndContentNote": "Short note.",
    "copyStatus_physicalOccurrences": ["Preservation"],
    "extent_physicalOccurrences": ["2 pages"],
}

RECORD_GROUP: dict[str, Any] = {
    "naId": 9000001,
    "levelOfDescription": "recordGroup",
    "recordType": "description",
    "title": "Records of the Example Survey Agency",
    "recordGroupNumber": 901.0,
    "inclusiveStartDate": date(1920),
    "inclusiveEndDate": date(1960, end=True),
    "scopeAndContentNote": "Records of a survey agency.\n\nMostly notebooks.",
    "referenceUnits": [REFERENCE_UNIT],
    "seriesCount": 3,
    "findingAids": [{"findingAidType": "Inventory", "fileFormat": "PDF", "source": "Demo"}],
    "creators": [SERIES_STUB["creators"][0]],
}
RECORD_GROUP_PROPERTIES = {
    "naId": 9000001,
    "title": "Records of the Example Survey Agency",
    "recordType": "description",
    "levelOfDescription": "recordGroup",
    "source": url(9000001),
    "authorityType_creators": ["organization"],
    "creatorType_creators": ["Most Recent"],
    "heading_creators": ["Department of Examples. Tidewater Survey Office. 1930-1940"],
    "naId_creators": [9200011],
    "fileFormat_findingAids": ["PDF"],
    "findingAidtype_findingAids": ["Inventory"],
    "source_findingAids": ["Demo"],
    "logicalDate_inclusiveEndDate": "1960-12-31",
    "logicalDate_inclusiveStartDate": "1920-01-01",
    "recordGroupNumber": 901,
    "address1_referenceUnits": ["1 Sample Road"],
    "city_referenceUnits": ["Sampletown"],
    "email_referenceUnits": ["unit@example.org"],
    "name_referenceUnits": ["Example Archives Unit"],
    "phone_referenceUnits": ["555-000-0001"],
    "postalCode_referenceUnits": ["00001"],
    "state_referenceUnits": ["ZZ"],
    "seriesCount": 3,
}

COLLECTION: dict[str, Any] = {
    "naId": 9050001,
    "levelOfDescription": "collection",
    "recordType": "description",
    "title": "Amos Quill Papers",
    "collectionIdentifier": "DEMO-QUILL",
    "inclusiveStartDate": {"year": 1900, "logicalDate": "1900-01-01", "dateQualifier": "ca."},
    "inclusiveEndDate": {"year": 1950, "logicalDate": "1950-12-31", "dateQualifier": "ca."},
    "donors": [{"naId": 9200040, "heading": "Quill, Bea, 1910-1990", "authorityType": "person"}],
    "scopeAndContentNote": "Personal papers.",
    "physicalOccurrences": [{"referenceUnits": [{"name": "Demo Library", "state": "YY"}]}],
    "variantControlNumbers": [{"number": "Q-1", "type": "Other Identifier"}],
    "dataControlGroup": {"groupCd": "DQ", "groupId": "ou=DQ,ou=groups"},
}
COLLECTION_PROPERTIES = {
    "naId": 9050001,
    "title": "Amos Quill Papers",
    "recordType": "description",
    "levelOfDescription": "collection",
    "source": url(9050001),
    "collectionIdentifier": "DEMO-QUILL",
    "authorityType_donors": ["person"],
    "heading_donors": ["Quill, Bea, 1910-1990"],
    "naId_donors": [9200040],
    "logicalDate_inclusiveEndDate": "1950-12-31",
    "logicalDate_inclusiveStartDate": "1900-01-01",
    # No top-level referenceUnits: read from physicalOccurrences instead.
    "name_referenceUnits": ["Demo Library"],
    "state_referenceUnits": ["YY"],
    "number_variantControlNumbers": ["Q-1"],
    "type_variantControlNumbers": ["Other Identifier"],
}

PERSON: dict[str, Any] = {
    "naId": 9200020,
    "heading": "Quill, Amos, 1880-1950",
    "authorityType": "person",
    "recordType": "authority",
    "name": "Quill, Amos",
    "fullerFormOfName": "Amos Bartholomew",
    "birthDate": date(1880),
    "deathDate": date(1950, end=True),
    "biographicalNote": "Amos Quill surveyed tides.\n\nHe retired in 1945.",
    "organizationalReferences": [
        {"naId": 9200001, "heading": "Tidewater Survey Office", "authorityType": "organization"}
    ],
    "linkCounts": {"totalDescription": 4.0, "creator": 3, "subject": 1},
    "role": {"creator": True, "donor": False},
    "variantPersonNames": [{"heading": "Quill, A.", "name": "Quill, A.", "numerator": "II"}],
    "sourceNotes": "Demo biographical dictionary",
    "personalTitle": "Dr.",
}
PERSON_PROPERTIES = {
    "naId": 9200020,
    "heading": "Quill, Amos, 1880-1950",
    "recordType": "authority",
    "authorityType": "person",
    "source": url(9200020),
    "biographicalNote": "Amos Quill surveyed tides.\n\nHe retired in 1945.",
    "logicalDate_birthDate": "1880-01-01",
    "logicalDate_deathDate": "1950-12-31",
    "fullerFormOfName": "Amos Bartholomew",
    "creator_linkCounts": 3,
    "subject_linkCounts": 1,
    "totalDescription_linkCounts": 4,
    "name": "Quill, Amos",
    "authorityType_organizationalReferences": ["organization"],
    "heading_organizationalReferences": ["Tidewater Survey Office"],
    "naId_organizationalReferences": [9200001],
    "personalTitle": "Dr.",
    "creator_role": True,
    "donor_role": False,
    "sourceNotes": ["Demo biographical dictionary"],
    "heading_variantPersonNames": ["Quill, A."],
    "name_variantPersonNames": ["Quill, A."],
    "numerator_variantPersonNames": ["II"],
}

ORGANIZATION: dict[str, Any] = {
    "naId": 9200001,
    "heading": "Department of Examples. Tidewater Survey Office. 1930-1940",
    "authorityType": "organization",
    "recordType": "authority",
    "administrativeHistoryNote": "The office measured tides.\n\nIt closed in 1940.",
    "organizationNames": [
        {
            "naId": 9200001,
            "name": "Tidewater Survey Office",
            "heading": "Department of Examples. Tidewater Survey Office. 1935-1940",
            "establishDate": date(1935),
            "abolishDate": date(1940, end=True),
        },
        {
            "naId": 9200011,
            "name": "Tidewater Survey Office",
            "heading": "Department of Examples. Tidewater Survey Office. 1930-1940",
            "establishDate": date(1930),
            "abolishDate": date(1935, end=True),
            "creatorTypes": ["Most Recent", "Predecessor"],
        },
        {"naId": "9200012", "name": "Tide Office", "recordSource": "NARA"},
    ],
    "jurisdictions": [{"naId": 9300002, "name": "Marsh Harbor (Fict.)"}],
    "personalReferences": [
        {"naId": 9200020, "heading": "Quill, Amos, 1880-1950", "authorityType": "person"}
    ],
    "variantOrganizationNames": ["Tide Office"],
    "programAreas": ["Hydrography"],
    "linkCounts": {"totalDescription": 7, "creator": 7},
}
ORGANIZATION_PROPERTIES = {
    "naId": 9200001,
    "heading": "Department of Examples. Tidewater Survey Office. 1930-1940",
    "recordType": "authority",
    "authorityType": "organization",
    "source": url(9200001),
    "administrativeHistoryNote": "The office measured tides.\n\nIt closed in 1940.",
    "naId_jurisdictions": [9300002],
    "name_jurisdictions": ["Marsh Harbor (Fict.)"],
    "creator_linkCounts": 7,
    "totalDescription_linkCounts": 7,
    "creatorTypes_organizationNames": ["Most Recent", "Predecessor"],
    "heading_organizationNames": [
        "Department of Examples. Tidewater Survey Office. 1935-1940",
        "Department of Examples. Tidewater Survey Office. 1930-1940",
    ],
    "naId_organizationNames": [9200001, 9200011, 9200012],
    "name_organizationNames": ["Tidewater Survey Office", "Tidewater Survey Office", "Tide Office"],
    "recordSource_organizationNames": ["NARA"],
    "variantOrganizationNames": ["Tide Office"],
    "authorityType_personalReferences": ["person"],
    "heading_personalReferences": ["Quill, Amos, 1880-1950"],
    "naId_personalReferences": [9200020],
    "programAreas": ["Hydrography"],
}

GEOGRAPHIC: dict[str, Any] = {
    "naId": 9300002,
    "heading": "Marsh Harbor (Fict.)",
    "authorityType": "geographicPlaceName",
    "recordType": "authority",
    "scopeNote": "A fictional harbor town.",
    "coordinates": "10.5, -20.25",
    "broaderTerms": [
        {"naId": 9300010, "heading": "Fictland", "name": "Fictland", "description": "State"}
    ],
    "narrowerTerms": [{"naId": 9300011, "heading": "Marsh Harbor Pier"}],
    "relatedTerms": [{"naId": 9300012, "heading": "Reed Bay (Fict.)"}],
    "linkCounts": {"subject": 2, "jurisdiction": 1, "totalDescription": 2},
    "useFor": ["Marsh Harbour"],
}
GEOGRAPHIC_PROPERTIES = {
    "naId": 9300002,
    "heading": "Marsh Harbor (Fict.)",
    "recordType": "authority",
    "authorityType": "geographicPlaceName",
    "source": url(9300002),
    "description_broaderTerms": ["State"],
    "naId_broaderTerms": [9300010],
    "heading_broaderTerms": ["Fictland"],
    "coordinates": "10.5, -20.25",
    "jurisdiction_linkCounts": 1,
    "subject_linkCounts": 2,
    "totalDescription_linkCounts": 2,
    "naId_narrowerTerms": [9300011],
    "heading_narrowerTerms": ["Marsh Harbor Pier"],
    "naId_relatedTerms": [9300012],
    "heading_relatedTerms": ["Reed Bay (Fict.)"],
    "scopeNote": "A fictional harbor town.",
    "useFor": ["Marsh Harbour"],
}

RECORDS_TYPE: dict[str, Any] = {
    "naId": 9300003,
    "heading": "Field notebooks",
    "authorityType": "specificRecordsType",
    "recordType": "authority",
    "scopeNote": "Use for notebooks kept in the field.",
    "broaderTerms": [{"naId": 9300020, "name": "Notebooks", "heading": "Notebooks"}],
    "linkCounts": {"specificRecordsType": 5, "subject": 5, "totalDescription": 5},
    "recordSource": "NARA",
    "importRecordControlNumber": "demo-1",
}
RECORDS_TYPE_PROPERTIES = {
    "naId": 9300003,
    "heading": "Field notebooks",
    "recordType": "authority",
    "authorityType": "specificRecordsType",
    "source": url(9300003),
    "naId_broaderTerms": [9300020],
    "name_broaderTerms": ["Notebooks"],
    "importRecordControlNumber": "demo-1",
    "specificRecordsType_linkCounts": 5,
    "subject_linkCounts": 5,
    "totalDescription_linkCounts": 5,
    "recordSource": "NARA",
    "scopeNote": "Use for notebooks kept in the field.",
}

TOPICAL: dict[str, Any] = {
    "naId": 9300001,
    "heading": "Tide gauges",
    "authorityType": "topicalSubject",
    "recordType": "authority",
    "scopeNote": "Use for instruments that measure tides.",
    "broaderTerms": [{"naId": 9300030, "name": "Hydrography"}],
    "narrowerTerms": [{"naId": 9300031, "heading": "Float gauges"}],
    "relatedTerms": [{"naId": 9300032, "heading": "Harbors"}, {"naId": 9300001, "heading": "Self"}],
    "linkCounts": {"topicalSubject": 9, "subject": 9, "totalDescription": 9},
    "sourceNotes": ["Demo thesaurus"],
}
TOPICAL_PROPERTIES = {
    "naId": 9300001,
    "heading": "Tide gauges",
    "recordType": "authority",
    "authorityType": "topicalSubject",
    "source": url(9300001),
    "naId_broaderTerms": [9300030],
    "name_broaderTerms": ["Hydrography"],
    "subject_linkCounts": 9,
    "topicalSubject_linkCounts": 9,
    "totalDescription_linkCounts": 9,
    "naId_narrowerTerms": [9300031],
    "heading_narrowerTerms": ["Float gauges"],
    "naId_relatedTerms": [9300032, 9300001],
    "heading_relatedTerms": ["Harbors", "Self"],
    "scopeNote": "Use for instruments that measure tides.",
    "sourceNotes": ["Demo thesaurus"],
}

FIXTURES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "item": (ITEM, ITEM_PROPERTIES),
    "fileUnit": (FILE_UNIT, FILE_UNIT_PROPERTIES),
    "series": (SERIES, SERIES_PROPERTIES),
    "recordGroup": (RECORD_GROUP, RECORD_GROUP_PROPERTIES),
    "collection": (COLLECTION, COLLECTION_PROPERTIES),
    "person": (PERSON, PERSON_PROPERTIES),
    "organization": (ORGANIZATION, ORGANIZATION_PROPERTIES),
    "geographicPlaceName": (GEOGRAPHIC, GEOGRAPHIC_PROPERTIES),
    "specificRecordsType": (RECORDS_TYPE, RECORDS_TYPE_PROPERTIES),
    "topicalSubject": (TOPICAL, TOPICAL_PROPERTIES),
}


def assert_storable(properties: dict[str, Any]) -> None:
    """Every value is a Neo4j property value: never None or "N/A", lists homogeneous."""
    for key, value in properties.items():
        assert value is not None, key
        assert value != "N/A", key
        if isinstance(value, list):
            assert value, f"{key} is an empty list"
            assert len({type(v) for v in value}) == 1, f"{key} mixes types: {value}"
            assert all(isinstance(v, str | int | float | bool) for v in value), key
            assert "N/A" not in value, key
        else:
            assert isinstance(value, str | int | float | bool), (key, value)
        if isinstance(value, str):
            assert value.strip(), key


# ---------------------------------------------------------------------------------------------
# Flattening per type
# ---------------------------------------------------------------------------------------------


def test_fixtures_cover_all_ten_types() -> None:
    assert sorted(FIXTURES) == sorted(RECORD_TYPES)
    assert sorted(FIELDS_BY_TYPE) == sorted(RECORD_TYPES)


@pytest.mark.parametrize("node_type", list(FIXTURES))
def test_each_type_flattens_to_the_seed_table(node_type: str) -> None:
    record, expected = FIXTURES[node_type]
    parsed = parse(copy.deepcopy(record))
    assert parsed.node_type == node_type
    assert parsed.record_kind == expected["recordType"]
    assert parsed.properties == expected
    assert parsed.completeness == len(expected)
    assert_storable(parsed.properties)
    # Every property name is one the type's table declares (plus source/ancestors).
    assert set(parsed.properties) <= set(FIELDS_BY_TYPE[node_type])


def test_seed_typos_are_fixed_consistently() -> None:
    for fields in FIELDS_BY_TYPE.values():
        assert "url_online_resources" not in fields
    assert "url_onlineResources" in FIELDS_BY_TYPE["fileUnit"]
    assert "findingAidtype_findingAids" in FIELDS_BY_TYPE["series"]
    assert "specificRecordsType" in FIELDS_BY_TYPE
    for node_type in ("item", "fileUnit", "series", "recordGroup", "collection"):
        assert "naId_creators" in FIELDS_BY_TYPE[node_type]
    for fields in FIELDS_BY_TYPE.values():
        assert not {"file_name", "line_num", "text", "chunkSeqId", "chunkId"} & set(fields)


def test_finding_aid_type_is_read_in_either_spelling() -> None:
    record = copy.deepcopy(SERIES)
    record["findingAids"] = [{"findingAidType": "Index"}, {"findingAidtype": "Folder List"}]
    assert parse(record).properties["findingAidtype_findingAids"] == ["Index", "Folder List"]


def test_series_summary_fields() -> None:
    parsed = parse(copy.deepcopy(SERIES))
    assert parsed.title == "Field Notebooks of the Tidewater Survey"
    assert parsed.parent_na_id == 9000001
    assert parsed.parent_title == "Records of the Example Survey Agency"
    assert parsed.date_range == "1931-03-02\u20131938"
    assert parsed.body_text == "This series consists of field notebooks.\n\nThey record tides."
    assert parsed.references == (
        Reference("creator", 9200011, SERIES_STUB["creators"][0]["heading"], "organization"),
        Reference("creator", 9200020, "Quill, Amos, 1880-1950", "person"),
        Reference("subject", 9300001, "Tide gauges", "topicalSubject"),
        Reference("subject", 9300002, "Marsh Harbor (Fict.)", "geographicPlaceName"),
        Reference("subject", 9300003, "Field notebooks", "specificRecordsType"),
    )
    assert parsed.org_name_aliases == ()


# ---------------------------------------------------------------------------------------------
# Line shapes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("node_type", list(FIXTURES))
def test_export_api_hit_and_bare_shapes_give_identical_records(node_type: str) -> None:
    record = FIXTURES[node_type][0]
    from_export = parse_line(export_line(record), "f", 3)
    from_hit = parse_line(api_hit_line(record), "f", 3)
    from_bare = parse_line(json.dumps(record), "f", 3)
    assert isinstance(from_export, ParsedRecord)
    assert from_export == from_hit == from_bare
    assert from_export.file_name == "f" and from_export.line_num == 3


def test_bytes_and_str_lines_are_the_same() -> None:
    text = export_line(SERIES)
    assert parse_line(text, "f", 1) == parse_line(text.encode("utf-8"), "f", 1)
    assert parse_line("\ufeff" + text, "f", 1) == parse_line(text, "f", 1)


# ---------------------------------------------------------------------------------------------
# Missing keys and odd types
# ---------------------------------------------------------------------------------------------


def test_minimal_record_has_only_identity_properties() -> None:
    parsed = parse({"naId": 5, "levelOfDescription": "fileUnit", "recordType": "description"})
    assert parsed.properties == {
        "naId": 5,
        "recordType": "description",
        "levelOfDescription": "fileUnit",
        "source": url(5),
    }
    assert (parsed.title, parsed.body_text, parsed.parent_na_id, parsed.date_range) == (
        None,
        None,
        None,
        None,
    )
    assert parsed.references == () and parsed.stubs == () and parsed.completeness == 4


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"naId": 6, "levelOfDescription": "series"}, ("description", "series", None)),
        (
            {"naId": 7, "authorityType": "person", "heading": "Doe, J."},
            ("authority", "person", "Doe, J."),
        ),
    ],
    ids=["description", "authority"],
)
def test_record_type_is_inferred_when_missing(
    record: dict[str, Any], expected: tuple[str, str, str | None]
) -> None:
    parsed = parse(record)
    assert (parsed.record_kind, parsed.node_type, parsed.title) == expected


def test_nulls_blanks_and_empty_lists_are_absent() -> None:
    record = {
        "naId": 8,
        "levelOfDescription": "item",
        "recordType": "description",
        "title": None,
        "scopeAndContentNote": "   ",
        "generalRecordsTypes": [],
        "otherTitles": ["", None, "Alt"],
        "accessRestriction": {"status": None, "note": "N/A"},
        "subjects": None,
    }
    parsed = parse(record)
    assert "title" not in parsed.properties
    assert "scopeAndContentNote" not in parsed.properties
    assert "generalRecordsTypes" not in parsed.properties
    assert parsed.properties["otherTitles"] == ["Alt"]
    assert "status_accessRestriction" not in parsed.properties
    # A value that the source itself wrote is kept as written.
    assert parsed.properties["note_accessRestriction"] == "N/A"
    assert parsed.body_text is None


@pytest.mark.parametrize(
    ("raw", "expected"), [("False", False), ("false", False), ("True", True), (True, True)]
)
def test_audiovisual_strings_become_booleans(raw: Any, expected: bool) -> None:
    record = {"naId": 9, "levelOfDescription": "item", "recordType": "description"}
    assert parse({**record, "audiovisual": raw}).properties["audiovisual"] is expected


@pytest.mark.parametrize(("raw", "expected"), [("123", 123), (1.0, 1), (" 42 ", 42), (77, 77)])
def test_na_id_coercion(raw: Any, expected: int) -> None:
    parsed = parse({"naId": raw, "levelOfDescription": "series"})
    assert parsed.na_id == expected
    assert parsed.properties["naId"] == expected
    assert parsed.properties["source"] == url(expected)


@pytest.mark.parametrize(
    ("record", "name", "expected"),
    [
        (
            {"naId": 10, "levelOfDescription": "recordGroup", "recordGroupNumber": 12.0},
            "recordGroupNumber",
            12,
        ),
        ({"naId": 10, "levelOfDescription": "recordGroup", "seriesCount": "4"}, "seriesCount", 4),
        (
            {"naId": 11, "authorityType": "person", "linkCounts": {"creator": 2.0}},
            "creator_linkCounts",
            2,
        ),
    ],
    ids=["float", "string", "nested float"],
)
def test_float_and_string_counts_become_ints(
    record: dict[str, Any], name: str, expected: int
) -> None:
    value = parse(record).properties[name]
    assert value == expected and isinstance(value, int)


def test_reference_entries_without_usable_na_id_are_skipped() -> None:
    record = {
        "naId": 12,
        "levelOfDescription": "item",
        "subjects": [
            {"heading": "No id", "authorityType": "topicalSubject"},
            {"naId": "x1", "heading": "Bad id", "authorityType": "topicalSubject"},
            {"naId": 2.0, "heading": "Good", "authorityType": "topicalSubject"},
            "not an object",
        ],
    }
    parsed = parse(record)
    assert parsed.references == (Reference("subject", 2, "Good", "topicalSubject"),)
    assert parsed.properties["naId_subjects"] == [2]
    assert parsed.properties["heading_subjects"] == ["No id", "Bad id", "Good"]


def test_unexpected_objects_and_mixed_lists_stay_storable() -> None:
    record = {
        "naId": 13,
        "levelOfDescription": "item",
        "generalNotes": [{"note": "A note"}, "plain", 5],
        "dateNote": {"a": 1, "b": "two"},
        "beginCongress": 80,
    }
    props = parse(record).properties
    assert props["generalNotes"] == ["A note", "plain", "5"]
    assert props["dateNote"] == '{"a": 1, "b": "two"}'
    assert props["beginCongress"] == 80
    assert_storable(props)


# ---------------------------------------------------------------------------------------------
# Ancestors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "ancestors", "parent_title"),
    [
        # ITEM's ancestors are given as distance 2, 3, 1: nearest first by distance.
        (ITEM, [9110001, 9100001, 9000001], "NB 4"),
        # Without distance: the export's farthest-first order, reversed.
        (
            {
                "naId": 14,
                "levelOfDescription": "fileUnit",
                "ancestors": [
                    {k: v for k, v in s.items() if k != "distance"} for s in (RG_STUB, SERIES_STUB)
                ],
            },
            [9100001, 9000001],
            "Field Notebooks of the Tidewater Survey",
        ),
    ],
    ids=["by distance in any input order", "no distance: reversed export order"],
)
def test_ancestors_nearest_first(
    record: dict[str, Any], ancestors: list[int], parent_title: str
) -> None:
    parsed = parse(record)
    assert parsed.properties["ancestors"] == ancestors
    assert (parsed.parent_na_id, parsed.parent_title) == (ancestors[0], parent_title)


def test_ancestor_stubs_carry_their_own_farther_ancestors() -> None:
    parsed = parse(ITEM)
    stubs = {s.na_id: s for s in parsed.stubs}
    assert stubs[9110001].node_type == "fileUnit"
    assert stubs[9110001].parent_na_id == 9100001
    assert stubs[9110001].properties == {
        "naId": 9110001,
        "recordType": "description",
        "levelOfDescription": "fileUnit",
        "source": url(9110001),
        "title": "NB 4",
        "ancestors": [9100001, 9000001],
    }
    series = stubs[9100001]
    assert series.parent_na_id == 9000001
    assert series.properties["ancestors"] == [9000001]
    assert series.properties["naId_creators"] == [9200011]
    assert series.properties["logicalDate_inclusiveStartDate"] == "1931-03-02"
    assert series.references == (
        Reference("creator", 9200011, SERIES_STUB["creators"][0]["heading"], "organization"),
    )
    group = stubs[9000001]
    assert group.properties == {
        "naId": 9000001,
        "recordType": "description",
        "levelOfDescription": "recordGroup",
        "source": url(9000001),
        "title": "Records of the Example Survey Agency",
        "logicalDate_inclusiveStartDate": "1920-01-01",
        "logicalDate_inclusiveEndDate": "1960-12-31",
        "recordGroupNumber": 901,
    }
    assert group.parent_na_id is None and group.title == "Records of the Example Survey Agency"
    # The ancestor series' creator becomes an authority stub too.
    assert stubs[9200011].node_type == "organization"
    for stub in parsed.stubs:
        assert_storable(stub.properties)


# ---------------------------------------------------------------------------------------------
# References, stubs, aliases
# ---------------------------------------------------------------------------------------------


def test_authority_stubs_come_from_the_references_own_data() -> None:
    stubs = {s.na_id: s for s in parse(SERIES).stubs}
    assert set(stubs) == {9000001, 9200011, 9200020, 9300001, 9300002, 9300003}
    assert stubs[9200020].properties == {
        "naId": 9200020,
        "recordType": "authority",
        "authorityType": "person",
        "source": url(9200020),
        "heading": "Quill, Amos, 1880-1950",
        "logicalDate_birthDate": "1880-01-01",
        "logicalDate_deathDate": "1950-12-31",
    }
    assert stubs[9200011].properties["logicalDate_establishDate"] == "1930-01-01"
    assert stubs[9300002].node_type == "geographicPlaceName"
    assert stubs[9300003].node_type == "specificRecordsType"
    assert stubs[9300003].title == "Field notebooks"


def test_organization_names_are_aliases_not_stubs() -> None:
    parsed = parse(ORGANIZATION)
    assert parsed.org_name_aliases == (9200011, 9200012)
    rels = [(r.rel, r.na_id, r.authority_type) for r in parsed.references]
    # In schema.REFERENCE_LISTS order; the organization's own naId is not a reference.
    assert rels == [
        ("jurisdiction", 9300002, "geographicPlaceName"),
        ("organizationName", 9200011, "organization"),
        ("organizationName", 9200012, "organization"),
        ("personalReference", 9200020, "person"),
    ]
    stub_ids = {s.na_id for s in parsed.stubs}
    assert stub_ids == {9200020, 9300002}
    jurisdiction = next(s for s in parsed.stubs if s.na_id == 9300002)
    assert jurisdiction.node_type == "geographicPlaceName"
    assert jurisdiction.properties["heading"] == "Marsh Harbor (Fict.)"


def test_only_organizations_have_aliases() -> None:
    for node_type, (record, _) in FIXTURES.items():
        if node_type != "organization":
            assert parse(record).org_name_aliases == ()


def test_term_lists_take_the_holders_type_and_skip_self() -> None:
    parsed = parse(TOPICAL)
    assert [(r.rel, r.na_id, r.heading, r.authority_type) for r in parsed.references] == [
        ("broaderTerm", 9300030, "Hydrography", "topicalSubject"),
        ("narrowerTerm", 9300031, "Float gauges", "topicalSubject"),
        ("relatedTerm", 9300032, "Harbors", "topicalSubject"),
        ("relatedTerm", 9300001, "Self", "topicalSubject"),
    ]
    assert {s.na_id for s in parsed.stubs} == {9300030, 9300031, 9300032}
    assert {s.node_type for s in parsed.stubs} == {"topicalSubject"}


def test_references_use_every_list_of_the_schema() -> None:
    rels: set[str] = set()
    for record, _ in FIXTURES.values():
        rels |= {r.rel for r in parse(record).references}
    assert rels == {rel.value for rel in REFERENCE_LISTS.values()}
    assert "organizationalReference" in {r.rel for r in parse(PERSON).references}
    assert "donor" in {r.rel for r in parse(COLLECTION).references}
    assert "contributor" in {r.rel for r in parse(ITEM).references}


def test_creator_without_authority_type_gets_no_stub() -> None:
    record = {
        "naId": 15,
        "levelOfDescription": "series",
        "creators": [{"naId": 99, "heading": "Unknown kind"}],
    }
    parsed = parse(record)
    assert parsed.references == (Reference("creator", 99, "Unknown kind", None),)
    assert parsed.stubs == ()


# ---------------------------------------------------------------------------------------------
# Body text and dates
# ---------------------------------------------------------------------------------------------


#: (case, record, `record_transcription` sibling or None, expected body text).
BODY_TEXTS: list[tuple[str, dict[str, Any], list[dict[str, Any]] | None, str | None]] = [
    # Joined OCR ("OCR one\n\nOCR two", 16 chars) beats the note ("Short note.", 11).
    ("item: joined extracted text when longest", ITEM, None, "OCR one\n\nOCR two"),
    (
        "item: a longer scope note",
        {**ITEM, "scopeAndContentNote": "A cataloguer's note that is longer than the OCR."},
        None,
        "A cataloguer's note that is longer than the OCR.",
    ),
    (
        "item: transcription when longest",
        ITEM,
        [
            {"contribution": "Dear Sir, the tide gauge at the pier is broken again."},
            {"contribution": "  Yours, A. Q.  "},
            {"note": "no contribution"},
        ],
        "Dear Sir, the tide gauge at the pier is broken again.\n\nYours, A. Q.",
    ),
    (
        "fileUnit: transcription",
        FILE_UNIT,
        [{"contribution": "Typed copy of page 1."}],
        "Typed copy of page 1.",
    ),
    ("fileUnit: title only, like most real file units", FILE_UNIT, None, None),
    (
        "series",
        SERIES,
        None,
        "This series consists of field notebooks.\n\nThey record tides.",
    ),
    ("recordGroup", RECORD_GROUP, None, "Records of a survey agency.\n\nMostly notebooks."),
    ("collection", COLLECTION, None, "Personal papers."),
    ("person", PERSON, None, "Amos Quill surveyed tides.\n\nHe retired in 1945."),
    (
        "person: a scope note is not its body text",
        {**PERSON, "biographicalNote": " ", "scopeNote": "x"},
        None,
        None,
    ),
    ("organization", ORGANIZATION, None, "The office measured tides.\n\nIt closed in 1940."),
    ("geographicPlaceName", GEOGRAPHIC, None, "A fictional harbor town."),
    ("specificRecordsType", RECORDS_TYPE, None, "Use for notebooks kept in the field."),
    ("topicalSubject", TOPICAL, None, "Use for instruments that measure tides."),
]


@pytest.mark.parametrize(
    ("record", "transcription", "expected"),
    [case[1:] for case in BODY_TEXTS],
    ids=[case[0] for case in BODY_TEXTS],
)
def test_body_text(
    record: dict[str, Any], transcription: list[dict[str, Any]] | None, expected: str | None
) -> None:
    siblings = {} if transcription is None else {"record_transcription": transcription}
    parsed = parse(record, **siblings)
    assert parsed.body_text == expected
    # The body text becomes chunk text later; it is never a property of the parsed record.
    assert "text" not in parsed.properties


#: (case, record, expected date range).
DATE_RANGES: list[tuple[str, dict[str, Any], str | None]] = [
    ("series", SERIES, "1931-03-02\u20131938"),
    ("recordGroup", RECORD_GROUP, "1920\u20131960"),
    ("collection", COLLECTION, "ca. 1900\u2013ca. 1950"),
    ("item: coverage dates before production dates", ITEM, "1933\u20131934"),
    ("person", PERSON, "1880\u20131950"),
    ("organization", ORGANIZATION, "1930\u20131940"),
    ("fileUnit", FILE_UNIT, None),
    ("topicalSubject", TOPICAL, None),
    (
        "item: production dates",
        {k: v for k, v in ITEM.items() if not k.startswith("coverage")},
        "1934-05-02\u20131934-05-06",
    ),
    (
        "item: a single day",
        {"naId": 16, "levelOfDescription": "item", "productionDates": [date(1945, 7, 4)]},
        "1945-07-04",
    ),
    (
        "person: open-ended",
        {"naId": 17, "authorityType": "person", "birthDate": date(1950)},
        "1950\u2013",
    ),
]


@pytest.mark.parametrize(
    ("record", "expected"),
    [case[1:] for case in DATE_RANGES],
    ids=[case[0] for case in DATE_RANGES],
)
def test_date_range(record: dict[str, Any], expected: str | None) -> None:
    assert parse(record).date_range == expected


# ---------------------------------------------------------------------------------------------
# Rejects
# ---------------------------------------------------------------------------------------------


NO_RECORD = "no record object (expected {'record': ...} or {'_source': {'record': ...}})"

#: (line, the reject's reason): every reason a line alone can earn, but wrong value types (below).
REJECTED_LINES: list[tuple[str | bytes, str]] = [
    ('{"record": {"naId": 1 "title": "x"}}', "malformed JSON: Expecting ',' delimiter (col 23)"),
    (b'{"record": {"naId": 1, "title": "\xff"}}', "invalid UTF-8 at byte 33"),
    ('{"hits": []}', NO_RECORD),
    ("[1, 2]", NO_RECORD),
    ('{"_source": {"metadata": {}}}', NO_RECORD),
    ('{"title": "no id or type"}', NO_RECORD),
    ('{"record": [1]}', "no record object: 'record' is list [1], expected object"),
    (export_line({"levelOfDescription": "item", "title": "x"}), "missing naId"),
    (export_line({"naId": None, "levelOfDescription": "item"}), "missing naId"),
    (
        export_line({"naId": 1, "levelOfDescription": "foo"}),
        "unknown type: levelOfDescription='foo'",
    ),
    (export_line({"naId": 1, "authorityType": "place"}), "unknown type: authorityType='place'"),
    (
        export_line({"naId": 1, "recordType": "authority", "levelOfDescription": "item"}),
        "unknown type: authorityType is missing",
    ),
    (export_line({"naId": 1, "recordType": "other"}), "unknown type: recordType='other'"),
    (
        export_line({"naId": 1, "recordType": "description"}),
        "unknown type: levelOfDescription is missing",
    ),
    (
        export_line(ITEM, record_transcription="text"),
        "wrong type: record_transcription is str 'text', expected list",
    ),
]


@pytest.mark.parametrize(("line", "reason"), REJECTED_LINES)
def test_rejected_line(line: str | bytes, reason: str) -> None:
    bad = reject(line)
    assert bad.reason == reason
    # The raw line is kept as read (bytes that are not UTF-8 replaced, at most 2,000
    # characters) for the rejects table.
    text = line if isinstance(line, str) else line.decode("utf-8", errors="replace")
    assert bad.raw == text[:2000]
    assert reject_category(bad.reason) in REJECT_CATEGORIES


def test_reject_categories() -> None:
    assert reject_category("malformed JSON: Expecting ',' delimiter (col 23)") == "malformed JSON"
    assert reject_category("invalid UTF-8 at byte 33") == "invalid UTF-8"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"naId": "abc"}, "wrong type: naId is str 'abc', expected integer"),
        ({"naId": 1.5}, "wrong type: naId is float 1.5, expected integer"),
        ({"naId": True}, "wrong type: naId is bool True, expected integer"),
        ({"naId": -4}, "wrong type: naId is int -4, expected integer"),
        ({"title": 5}, "wrong type: title is int 5, expected string"),
        ({"creators": {"naId": 1}}, "wrong type: creators is dict {'naId': 1}, expected list"),
        ({"ancestors": "12"}, "wrong type: ancestors is str '12', expected list"),
        (
            {"generalRecordsTypes": "Textual"},
            "wrong type: generalRecordsTypes is str 'Textual', expected list",
        ),
        (
            {"accessRestriction": "Open"},
            "wrong type: accessRestriction is str 'Open', expected object",
        ),
        (
            {"inclusiveStartDate": 1931},
            "wrong type: inclusiveStartDate is int 1931, expected date object",
        ),
        ({"itemCount": "many"}, "wrong type: itemCount is str 'many', expected integer"),
        ({"fileUnitCount": 2.5}, "wrong type: fileUnitCount is float 2.5, expected integer"),
        ({"audiovisual": "maybe"}, "wrong type: audiovisual is str 'maybe', expected boolean"),
    ],
)
def test_wrong_types_name_the_field(change: dict[str, Any], reason: str) -> None:
    record = {**SERIES, **change}
    bad = reject(export_line(record))
    assert bad.reason == reason
    assert reject_category(bad.reason) == "wrong type"


def test_raw_is_truncated_to_2000_characters() -> None:
    bad = reject('{"record": ' + "x" * 5000)
    assert len(bad.raw) == 2000


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def good_lines(n: int, start: int = 1) -> list[str]:
    return [
        export_line(
            {"naId": start + i, "levelOfDescription": "fileUnit", "title": f"Folder {i} " * 20}
        )
        for i in range(n)
    ]


def test_jsonl_file_with_mixed_good_bad_and_blank_lines(tmp_path: Path) -> None:
    content = "\n".join(
        [
            good_lines(1)[0],
            "",
            "{oops",
            "   ",
            api_hit_line({"naId": 50, "levelOfDescription": "series"}),
            json.dumps({"naId": 60, "recordType": "authority", "authorityType": "person"}),
        ]
    )
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(content.encode() + b"\r\n" + b'{"record": {"naId": 2, "title": "\xfe"}}\n')
    results = list(iter_file(path))
    assert [(type(r).__name__, r.line_num) for r in results] == [
        ("ParsedRecord", 1),
        ("Rejected", 3),
        ("ParsedRecord", 5),
        ("ParsedRecord", 6),
        ("Rejected", 7),
    ]
    assert [r.file_name for r in results] == ["mixed.jsonl"] * 5
    assert isinstance(results[1], Rejected) and isinstance(results[4], Rejected)
    assert results[1].reason.startswith("malformed JSON")
    assert results[4].reason == "invalid UTF-8 at byte 33"
    assert [r.na_id for r in results if isinstance(r, ParsedRecord)] == [1, 50, 60]


def test_display_name_and_json_suffix(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(good_lines(1)[0] + "\n", encoding="utf-8")
    (result,) = list(iter_file(path, display_name="descriptions/x/one.json"))
    assert isinstance(result, ParsedRecord)
    assert (result.file_name, result.line_num) == ("descriptions/x/one.json", 1)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    assert list(iter_file(path)) == [Rejected("empty.jsonl", 0, "empty file", "")]


def test_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "part.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(good_lines(3)) + "\n").encode()))
    assert [r.na_id for r in iter_file(path) if isinstance(r, ParsedRecord)] == [1, 2, 3]


def test_truncated_gzip_yields_good_lines_then_one_reject(tmp_path: Path) -> None:
    lines = good_lines(2000)
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    results = list(iter_file(path))
    parsed = [r for r in results if isinstance(r, ParsedRecord)]
    rejected = [r for r in results if isinstance(r, Rejected)]
    assert 100 < len(parsed) < 2000
    assert [r.na_id for r in parsed] == list(range(1, len(parsed) + 1))
    assert len(rejected) == 1 and results[-1] is rejected[0]
    assert rejected[0].reason.startswith("truncated gzip stream: ")
    assert rejected[0].line_num == len(parsed) + 1


def make_zip(path: Path, members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def test_zip_members_are_read_and_named(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    make_zip(
        path,
        {
            "rg_1/rg_1-1.jsonl": "\n".join(good_lines(2)),
            "readme.txt": "not records",
            "person/person-1.json": json.dumps({"record": PERSON}),
        },
    )
    results = list(iter_file(path))
    assert [(r.file_name, r.line_num, r.na_id) for r in results if isinstance(r, ParsedRecord)] == [
        ("export.zip!rg_1/rg_1-1.jsonl", 1, 1),
        ("export.zip!rg_1/rg_1-1.jsonl", 2, 2),
        ("export.zip!person/person-1.json", 1, 9200020),
    ]
    assert len(results) == 3


def test_zip_without_record_members(tmp_path: Path) -> None:
    path = tmp_path / "nothing.zip"
    make_zip(path, {"readme.txt": "x"})
    (result,) = list(iter_file(path))
    assert isinstance(result, Rejected) and result.reason.startswith("empty file")


def test_truncated_zip_yields_good_lines_then_one_reject(tmp_path: Path) -> None:
    path = tmp_path / "cut.zip"
    data = make_zip(
        path,
        {
            "a/a-1.jsonl": "\n".join(good_lines(300)) + "\n",
            "a/a-2.jsonl": "\n".join(good_lines(3000, start=1001)) + "\n",
        },
    )
    path.write_bytes(data[: len(data) * 2 // 3])
    results = list(iter_file(path))
    parsed = [r for r in results if isinstance(r, ParsedRecord)]
    rejected = [r for r in results if isinstance(r, Rejected)]
    first = [r.na_id for r in parsed if r.file_name == "cut.zip!a/a-1.jsonl"]
    second = [r.na_id for r in parsed if r.file_name == "cut.zip!a/a-2.jsonl"]
    assert first == list(range(1, 301))
    assert 0 < len(second) < 3000 and second == list(range(1001, 1001 + len(second)))
    assert len(rejected) == 1 and results[-1] is rejected[0]
    assert rejected[0].reason.startswith("truncated zip archive")
    assert rejected[0].file_name == "cut.zip!a/a-2.jsonl"


def test_zip_missing_only_its_central_directory(tmp_path: Path) -> None:
    path = tmp_path / "tail.zip"
    data = make_zip(path, {"a.jsonl": "\n".join(good_lines(5))})
    path.write_bytes(data[:-30])
    results = list(iter_file(path))
    assert [r.na_id for r in results if isinstance(r, ParsedRecord)] == [1, 2, 3, 4, 5]
    assert results[-1] == Rejected(
        "tail.zip", 0, "truncated zip archive: central directory missing", ""
    )


def test_iter_file_streams(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(good_lines(50)), encoding="utf-8")
    iterator = iter_file(path)
    first = next(iterator)
    assert isinstance(first, ParsedRecord) and first.na_id == 1


# ---------------------------------------------------------------------------------------------
# The real samples in ../shared (read at test time; nothing of them is stored here)
# ---------------------------------------------------------------------------------------------


def real_export_files() -> list[Path]:
    return sorted(EXPORT_DIR.glob("*.jsonl"))


@needs_real_data
def test_real_export_parses_without_rejects_and_counts_match() -> None:
    independent: Counter[str] = Counter()
    lines = 0
    for path in real_export_files():
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    lines += 1
                    independent[json.loads(line)["record"]["levelOfDescription"]] += 1
    parsed: Counter[str] = Counter()
    rejects = []
    for path in real_export_files():
        for result in iter_file(path):
            if isinstance(result, Rejected):
                rejects.append(result)
            else:
                parsed[result.node_type] += 1
                assert_storable(result.properties)
                for stub in result.stubs:
                    assert_storable(stub.properties)
    assert rejects == []
    assert lines == 989
    assert parsed == independent
    assert dict(independent) == {"fileUnit": 881, "series": 107, "item": 1}


@needs_real_data
def test_real_api_hits_parse_to_the_same_records_as_the_export() -> None:
    compared = 0
    for path in real_export_files():
        hits = HITS_DIR / f"{path.stem}.hits.jsonl"
        if not hits.is_file():
            continue
        from_export = list(iter_file(path, display_name="x"))
        from_hits = list(iter_file(hits, display_name="x"))
        assert [r.na_id for r in from_export] == [r.na_id for r in from_hits]  # type: ignore[union-attr]
        assert from_export == from_hits
        compared += len(from_export)
    assert compared == 988  # every export line except the one bare record kept without a hit


@needs_real_data
def test_real_ancestors_are_nearest_first() -> None:
    checked = 0
    for path in real_export_files():
        with path.open(encoding="utf-8") as handle:
            raw_lines = [line for line in handle if line.strip()]
        for line_num, line in enumerate(raw_lines, start=1):
            record = json.loads(line)["record"]
            parsed = parse_line(line, path.name, line_num)
            assert isinstance(parsed, ParsedRecord)
            by_distance = sorted(record["ancestors"], key=lambda a: a["distance"])
            assert parsed.properties["ancestors"] == [a["naId"] for a in by_distance]
            # The export lists them farthest first, so nearest-first is the reverse.
            assert parsed.properties["ancestors"] == [
                a["naId"] for a in reversed(record["ancestors"])
            ]
            assert parsed.parent_na_id == by_distance[0]["naId"]
            checked += 1
    assert checked == 989


@needs_real_data
def test_real_body_texts_follow_the_rules() -> None:
    with_ocr = series_with_note = 0
    for path in real_export_files():
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)["record"]
                parsed = parse_line(line, path.name, 1)
                assert isinstance(parsed, ParsedRecord)
                ocr = [
                    o["extractedText"]
                    for o in record.get("digitalObjects", [])
                    if "extractedText" in o
                ]
                note = (record.get("scopeAndContentNote") or "").strip()
                if ocr and len("\n\n".join(t.strip() for t in ocr)) > len(note):
                    with_ocr += 1
                    assert parsed.body_text == "\n\n".join(t.strip() for t in ocr)
                elif note:
                    series_with_note += record["levelOfDescription"] == "series"
                    assert parsed.body_text == note
                else:
                    assert parsed.body_text is None
    assert with_ocr == 1
    assert series_with_note == 102
