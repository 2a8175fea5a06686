"""The project's radiology shorthand table: what residents type in a search box, and what reports write instead.

Written by hand for this project from common radiology usage (chest, neuro, body, lines and tubes, the small-word
shorthand of clinical notes); not copied from any other list. Keys are matched case-insensitively as whole tokens
(`retriever.search.abbreviations`), so a key must never be an ordinary English word ("as", "pt", "ant", "post" are left
out; `COMMON_WORDS` guards user tables the same way). Ambiguous shorthand keeps the radiology-report reading
(PE = pulmonary embolism, not physical examination) or is left out when no reading dominates (LAD, RA, CP).
Plurals are listed where residents write them ("GGOs", "LNs"). The entries under "added on the dev split" were
added after reading which shorthand in the dev split's abbreviated queries the first version lacked
(eval/robustness/expansion_dev.py); only standard radiology usage was added, and the test split was not looked at.
"""

from __future__ import annotations

#: Clinical-note shorthand for small words: replaced, never kept beside the expansion (BM25 drops them anyway).
SMALL_WORDS: dict[str, str] = {
    "w/": "with",
    "w/o": "without",
    "b/l": "bilateral",
    "h/o": "history of",
    "s/p": "status post",
    "r/o": "rule out",
    "c/w": "consistent with",
    "c/f": "concerning for",
    "f/u": "follow-up",
    "2/2": "secondary to",
    "&": "and",
    "+/-": "with or without",
}

#: Radiology shorthand -> report wording (keys lowercase).
RADIOLOGY: dict[str, str] = {
    # lobes, quadrants, sides
    "rul": "right upper lobe",
    "rml": "right middle lobe",
    "rll": "right lower lobe",
    "lul": "left upper lobe",
    "lll": "left lower lobe",
    "ruq": "right upper quadrant",
    "rlq": "right lower quadrant",
    "luq": "left upper quadrant",
    "llq": "left lower quadrant",
    "bilat": "bilateral",
    "lt": "left",
    "rt": "right",
    # a lone R or L before a body part ("R hip", "L eye"): the side, the only reading in a finding; added after the
    # ICD-10-CM dev codes' rephrasings (eval/robustness/rephrase.py), where "R eye" retrieved the left eye's code
    "r": "right",
    "l": "left",
    # lung findings and diseases
    "ptx": "pneumothorax",
    "pnx": "pneumothorax",
    "ptxs": "pneumothoraces",
    "htx": "hemothorax",
    "ggo": "ground-glass opacity",
    "ggos": "ground-glass opacities",
    "ggn": "ground-glass nodule",
    "pna": "pneumonia",
    "atx": "atelectasis",
    "atelec": "atelectasis",
    "consol": "consolidation",
    "opac": "opacity",
    "opacs": "opacities",
    "eff": "effusion",
    "effs": "effusions",
    "pleff": "pleural effusion",
    "pulm": "pulmonary",
    "copd": "chronic obstructive pulmonary disease",
    "ild": "interstitial lung disease",
    "uip": "usual interstitial pneumonia",
    "nsip": "nonspecific interstitial pneumonia",
    "ards": "acute respiratory distress syndrome",
    "spn": "solitary pulmonary nodule",
    "tb": "tuberculosis",
    "pe": "pulmonary embolism",
    "pes": "pulmonary emboli",
    "dvt": "deep vein thrombosis",
    "ln": "lymph node",
    "lns": "lymph nodes",
    "lymphadenop": "lymphadenopathy",
    "mets": "metastases",
    # heart and vessels
    "chf": "congestive heart failure",
    "cardiomeg": "cardiomegaly",
    "cmg": "cardiomegaly",
    "htn": "hypertension",
    "cad": "coronary artery disease",
    "cabg": "coronary artery bypass graft",
    "avr": "aortic valve replacement",
    "mvr": "mitral valve replacement",
    "aaa": "abdominal aortic aneurysm",
    "svc": "superior vena cava",
    "ivc": "inferior vena cava",
    "lv": "left ventricle",
    "rv": "right ventricle",
    "lvh": "left ventricular hypertrophy",
    "mediast": "mediastinal",
    "cardiopulm": "cardiopulmonary",
    "vasc": "vascular",
    # lines, tubes, devices
    "ett": "endotracheal tube",
    "ngt": "nasogastric tube",
    "ogt": "orogastric tube",
    "picc": "peripherally inserted central catheter",
    "cvc": "central venous catheter",
    "ij": "internal jugular",
    "ppm": "permanent pacemaker",
    "aicd": "automatic implantable cardioverter-defibrillator",
    "trach": "tracheostomy",
    # neuro
    "sah": "subarachnoid hemorrhage",
    "sdh": "subdural hematoma",
    "edh": "epidural hematoma",
    "ich": "intracranial hemorrhage",
    "ivh": "intraventricular hemorrhage",
    "cva": "cerebrovascular accident",
    "mca": "middle cerebral artery",
    "aca": "anterior cerebral artery",
    "msk": "musculoskeletal",
    # abdomen, bone
    "sbo": "small bowel obstruction",
    "cbd": "common bile duct",
    "gb": "gallbladder",
    "hcc": "hepatocellular carcinoma",
    "rcc": "renal cell carcinoma",
    "djd": "degenerative joint disease",
    "ddd": "degenerative disc disease",
    "fx": "fracture",
    "fxs": "fractures",
    "abd": "abdominal",
    # report language
    "wnl": "within normal limits",
    "nml": "normal",
    "unremark": "unremarkable",
    "ddx": "differential diagnosis",
    "dx": "diagnosis",
    "hx": "history",
    "sx": "symptoms",
    "cxr": "chest radiograph",
    "neg": "negative",
    "sig": "significant",
    "approx": "approximately",
    "incr": "increased",
    "decr": "decreased",
    "nodul": "nodular",
    "interstit": "interstitial",
    "hyperinfl": "hyperinflation",
    "hemidiaph": "hemidiaphragm",
    "degen": "degenerative",
    # added on the dev split (standard shorthand the first version missed)
    "pul": "pulmonary",
    "lat": "lateral",
    "hh": "hiatal hernia",
    "sq": "subcutaneous",
    "vb": "vertebral body",
    "lig": "ligament",
    "prev": "previous",
    "egj": "esophagogastric junction",
    "gej": "gastroesophageal junction",
}

#: Words a user table may list as shorthand but that are ordinary English in a query: expanded only when typed in
#: capitals (AS, PT, US) in a query that is not all capitals. Small on purpose: the function words a search
#: engine's stop list holds are added to it by `retriever.search.abbreviations`.
_COMMON = (
    "am an as at be by do go he hi if in is it me my no of oh ok on or so to up us we "
    "ant art bad bed big can cap car cat cut dim dip ear end eye far fat few fit for got hit hot "
    "ill key lab lap lay led leg let lid lip low man map mid min mix mod new nil non not now old "
    "one out own per pin pit pod pot pre pro pt put raw red rib rim rod row run sac saw see set "
    "sit six ten the tip toe top two use via vs wax way web wet who why yes "
    "able also area base bone calf cast cord core diff dose drop face fine firm flat form free "
    "full gain hand head heel hip iliac lead left less like line long loop lung main mass mild "
    "mode more much neck node none note open pain part past peri plus post rest ring rule same "
    "scan seen side sign size slow soft some spot stem step tail tear thin tube type unit vein "
    "wall week well wide with wrist"
)
COMMON_WORDS: frozenset[str] = frozenset(_COMMON.split())
