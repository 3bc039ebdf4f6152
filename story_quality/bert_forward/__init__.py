"""The exact BERT forward both metrics run: UNION's classifier and GRUEN's masked LM and CoLA model.

:mod:`.classifier` (a BERT sequence classifier's forward, its pooler and head included),
:mod:`.packed_layers` (BERT's encoder layers with every story's real word pieces packed into one
run, bit for bit the padded layers), :mod:`.exact_products` (products cut into row slices whose
results do not depend on the batch) and :mod:`.onednn_products` (``precision="fp32-onednn"``: a
CPU's linear layers multiplied by oneDNN).
"""
