"""The measurement core: a candidate's measurement and its checks (`measurement`), timing
statistics (`stats`), the records of a tune run's rounds (`records`) and their trace read back
from the run store (`traces`), the attainable roofline (`roofline`) and the device's measured
ceilings it stands on (`ceilings`)."""
