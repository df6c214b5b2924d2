"""Reading what a report is computed from: lmms-eval samples logs and other harnesses' prediction files, who wrote a
run, each question's answer options, and the tidy frame they become (its columns declared once, and what it refuses
to join)."""
