"""Profiles: ncu collection, report reading (ncu_report or CSV), the normalized Profile."""
